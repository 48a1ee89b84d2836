//! `lockpick merge`: the stores of a matrix's or a suite's shards (`--shard K/N`, each run on
//! a machine of its own) joined into one store: the matrix's matrix.json, matrix.html and
//! markdown, the suite's record, trend page and JUnit file, and every run's folder. Shards of
//! another file, lockpick, seed count or shard count are refused, naming the shard; a shard
//! not given is reported as missing, never counted as safe.

mod matrix;
mod suite;

use crate::cli::MergeArgs;
use crate::outcome::{Exit, Failure, Outcome};
use lockpick_harness::matrix::Shard;
use lockpick_harness::run::utc_stamp;
use lockpick_reports::matrix::MATRIX_DIR;
use lockpick_reports::{SUITE_DIR, SUITE_FILE};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

pub fn merge(args: MergeArgs) -> Outcome {
    let holds = |p: &PathBuf, file: &str, dir: &str| p.join(file).is_file() || p.join(dir).is_dir();
    let matrices: Vec<PathBuf> = args
        .shards
        .iter()
        .filter(|p| holds(p, "matrix.toml", MATRIX_DIR))
        .cloned()
        .collect();
    let suites: Vec<PathBuf> = args
        .shards
        .iter()
        .filter(|p| holds(p, SUITE_FILE, SUITE_DIR))
        .cloned()
        .collect();
    if let Some(neither) = args
        .shards
        .iter()
        .find(|p| !matrices.contains(p) && !suites.contains(p))
    {
        return Err(Failure::Usage(format!(
            "merge {}: it holds neither a matrix nor a suite; allowed: a shard's store (with matrix/ or suite/), or its matrix or suite folder",
            neither.display()
        )));
    }
    let matrix = (!matrices.is_empty()).then(|| matrix::merge_matrix(&matrices, &args));
    let suite = (!suites.is_empty()).then(|| suite::merge_suite(&suites, &args));
    match (matrix, suite) {
        (Some(m), Some(s)) => worse(m, s),
        (Some(one), None) | (None, Some(one)) => one,
        (None, None) => unreachable!("every given store holds one or the other (checked)"),
    }
}

/// What every kind of shard tells the merge: which shard it is, and where it was found.
trait ShardOf {
    fn shard(&self) -> Shard;
    fn dir(&self) -> &Path;
}

/// Reads every shard of `given` with `read`, refusing (with `same`'s sentence) one of another
/// run than the first and one given twice; then the shards of `1..=N` not given, named.
fn collect<T: ShardOf>(
    given: &[PathBuf],
    read: impl Fn(&Path) -> Result<T, Failure>,
    same: impl Fn(&T, &T) -> Result<(), Failure>,
) -> Result<(Vec<T>, Vec<Shard>), Failure> {
    let mut shards: Vec<T> = Vec::new();
    for g in given {
        let s = read(g)?;
        if let Some(first) = shards.first() {
            same(first, &s)?;
        }
        if let Some(twin) = shards.iter().find(|t| t.shard() == s.shard()) {
            return Err(Failure::Usage(format!(
                "merge: shard {} is given twice ({} and {}); allowed: each shard once",
                s.shard(),
                twin.dir().display(),
                s.dir().display()
            )));
        }
        shards.push(s);
    }
    let n = shards.first().map(|s| s.shard().n).ok_or_else(|| {
        Failure::usage("merge: no shard given; allowed: one or more shard stores")
    })?;
    let missing = (1..=n)
        .filter(|k| !shards.iter().any(|s| s.shard().k == *k))
        .map(|k| Shard { k, n })
        .collect();
    Ok((shards, missing))
}

/// The store a shard's folder (`STORE/<kind_dir>/<time>/`) stands in: its runs' folders are
/// relative to it.
fn store_of(dir: &Path, kind_dir: &str) -> Result<PathBuf, Failure> {
    dir.parent()
        .filter(|p| p.file_name().is_some_and(|n| n == kind_dir))
        .and_then(Path::parent)
        .map(Path::to_owned)
        .ok_or_else(|| {
            Failure::Usage(format!(
                "merge {}: a shard's folder must stand in its store's `{kind_dir}/` folder, beside its runs",
                dir.display()
            ))
        })
}

/// The worse of two endings: a failure over an exit, a mismatch over success.
fn worse(a: Outcome, b: Outcome) -> Outcome {
    match (a, b) {
        (Err(e), _) | (_, Err(e)) => Err(e),
        (Ok(Exit::Done), other) => other,
        (mine, _) => mine,
    }
}

/// A new folder under `root` named for now, with `suffix`.
fn fresh_folder(root: &Path, suffix: &str) -> Result<PathBuf, Failure> {
    let stamp = format!("{}-{suffix}", utc_stamp(SystemTime::now()));
    let mut dir = root.join(&stamp);
    let mut n = 2;
    while dir.exists() {
        dir = root.join(format!("{stamp}-{n}"));
        n += 1;
    }
    create_dir(&dir)?;
    Ok(dir)
}

fn create_dir(path: &Path) -> Result<(), Failure> {
    std::fs::create_dir_all(path).map_err(|source| Failure::CreateDir {
        path: path.to_owned(),
        source,
    })
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    lockpick_reports::write_atomic(path, bytes).map_err(Failure::WriteOutput)
}

/// Copies a run's folder `rel` from the store `from` into the store `to` (same place in it),
/// unless it is there already.
fn copy_run(from: &Path, to: &Path, rel: &str) -> Result<(), Failure> {
    let (src, dst) = (from.join(rel), to.join(rel));
    if src.is_dir() && !dst.exists() {
        copy_tree(&src, &dst)?;
    }
    Ok(())
}

/// Copies the folder `from` to `to`: files, folders and symbolic links as links.
fn copy_tree(from: &Path, to: &Path) -> Result<(), Failure> {
    create_dir(to)?;
    let entries = std::fs::read_dir(from).map_err(|source| Failure::ReadInput {
        path: from.to_owned(),
        source,
    })?;
    for e in entries.flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let kind = e.file_type().map_err(|source| Failure::ReadInput {
            path: src.clone(),
            source,
        })?;
        let copied = if kind.is_symlink() {
            std::fs::read_link(&src).and_then(|target| std::os::unix::fs::symlink(target, &dst))
        } else if kind.is_dir() {
            copy_tree(&src, &dst)?;
            Ok(())
        } else {
            std::fs::copy(&src, &dst).map(|_| ())
        };
        copied.map_err(|source| Failure::CreateDir {
            path: dst.clone(),
            source,
        })?;
    }
    Ok(())
}
