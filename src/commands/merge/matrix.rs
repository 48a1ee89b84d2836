//! The shards of one matrix (`matrix --shard K/N`, each run on its own
//! machine into its own store) joined into one matrix folder, whose matrix.json, matrix.html
//! and markdown are built as `--report-only` builds them. Shards of another matrix file,
//! another lockpick or another seed count are refused, naming the shard; a shard not given
//! is reported as missing, and its runs count as not made, never as safe.

use super::{collect, copy_run, copy_tree, create_dir, fresh_folder, store_of, write, ShardOf};
use crate::cli::{MatrixArgs, MergeArgs};
use crate::commands::matrix::run;
use crate::outcome::{Failure, Outcome};
use lockpick_harness::matrix::Shard;
use lockpick_harness::matrix_run::newest_matrix;
use lockpick_reports::matrix::{MatrixRecord, RunSummary, MATRIX_DIR};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One shard as given.
struct ShardStore {
    /// Its matrix folder (`STORE/matrix/<time>/`).
    dir: PathBuf,
    /// The store its runs' folders are relative to.
    store: PathBuf,
    shard: Shard,
    record: MatrixRecord,
    matrix_file: Vec<u8>,
}

impl ShardOf for ShardStore {
    fn shard(&self) -> Shard {
        self.shard
    }
    fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Merges the matrix shards in `given` (each a shard store or its matrix folder).
pub(super) fn merge_matrix(given: &[PathBuf], args: &MergeArgs) -> Outcome {
    let (shards, missing) = collect(given, read_shard, check_same)?;
    let first = &shards[0];
    let n = first.shard.n;
    let missing: Vec<String> = missing.iter().map(Shard::to_string).collect();
    for m in &missing {
        eprintln!("lockpick: merge: shard {m} was not given: its runs are missing (not safe)");
    }
    let out = fresh_folder(&args.store.join(MATRIX_DIR), "merged")?;
    create_dir(&out.join("runs"))?;
    create_dir(&out.join("scenarios"))?;
    write(&out.join("matrix.toml"), &first.matrix_file)?;
    copy_tree(&first.dir.join("scenarios"), &out.join("scenarios"))?;
    for s in &shards {
        copy_runs(s, &out, &args.store)?;
    }
    // The record the report-only build starts from: the shards' matrix, no shard of its own,
    // and the shards it lacks.
    let mut record = first.record.clone();
    record.shard = None;
    record.missing_shards = missing;
    record.cells.clear();
    write(
        &out.join("matrix.json"),
        &serde_json::to_vec_pretty(&record).expect("records serialize"),
    )?;
    eprintln!(
        "lockpick: merged {} shard(s) of {n} into {}",
        shards.len(),
        out.display()
    );
    run(&MatrixArgs {
        action: None,
        file: None,
        seeds: None,
        rows: Vec::new(),
        faults: Vec::new(),
        resume: Some(out),
        redo: false,
        report_only: true,
        recheck: false,
        markdown: args.markdown.clone(),
        // `merge --junit` is the merged suite's file; a merged matrix's JUnit comes of
        // `matrix --resume DIR --report-only --junit FILE`.
        junit: None,
        store: args.store.clone(),
        toxiproxy: None,
        external: Vec::new(),
        shard: None,
        explore_safe: None,
        resource: None,
        fresh_servers: false,
        jobs: 1,
        until: None,
        max_seeds: None,
    })
}

/// The shard in `given`: a shard's matrix folder, or a store holding one matrix (the newest).
fn read_shard(given: &Path) -> Result<ShardStore, Failure> {
    let dir = if given.join("matrix.toml").is_file() {
        given.to_owned()
    } else {
        newest_matrix(&given.join(MATRIX_DIR)).ok_or_else(|| {
            Failure::Usage(format!(
                "merge {}: no matrix there; allowed: a shard's store (with matrix/<time>/) or its matrix folder",
                given.display()
            ))
        })?
    };
    let json = dir.join("matrix.json");
    let bytes = std::fs::read(&json).map_err(|source| Failure::ReadInput {
        path: json.clone(),
        source,
    })?;
    let record: MatrixRecord = serde_json::from_slice(&bytes)
        .map_err(|e| Failure::Usage(format!("merge: read {}: {e}", json.display())))?;
    let shard = record
        .shard
        .as_deref()
        .ok_or_else(|| {
            Failure::Usage(format!(
                "merge {}: this matrix was not run as a shard (no --shard); allowed: the folders `matrix --shard K/N` made",
                dir.display()
            ))
        })?
        .parse::<Shard>()
        .map_err(|e| Failure::Usage(format!("merge: read {}: shard {e}", json.display())))?;
    let file = dir.join("matrix.toml");
    let matrix_file = std::fs::read(&file).map_err(|source| Failure::ReadInput {
        path: file.clone(),
        source,
    })?;
    let store = store_of(&dir, MATRIX_DIR)?;
    Ok(ShardStore {
        dir,
        store,
        shard,
        record,
        matrix_file,
    })
}

/// Refuses a shard of another matrix than `first`'s, in a sentence naming both.
fn check_same(first: &ShardStore, s: &ShardStore) -> Result<(), Failure> {
    let differs = |what: &str| {
        Failure::Usage(format!(
            "merge: shard {} ({}) has {what} than shard {} ({}); allowed: the shards of one `matrix --shard` run",
            s.shard,
            s.dir.display(),
            first.shard,
            first.dir.display()
        ))
    };
    if s.matrix_file != first.matrix_file {
        return Err(differs("another matrix file"));
    }
    if s.record.lockpick_version != first.record.lockpick_version {
        return Err(differs(&format!(
            "another lockpick ({} rather than {})",
            s.record.lockpick_version, first.record.lockpick_version
        )));
    }
    if s.record.seeds != first.record.seeds {
        return Err(differs(&format!(
            "other seeds ({} rather than {} per cell)",
            s.record.seeds, first.record.seeds
        )));
    }
    if s.shard.n != first.shard.n {
        return Err(differs(&format!(
            "another shard count ({} rather than {})",
            s.shard.n, first.shard.n
        )));
    }
    if s.record.server_versions != first.record.server_versions {
        eprintln!(
            "lockpick: merge: shard {} ran other server versions than shard {}: {:?} vs {:?}",
            s.shard, first.shard, s.record.server_versions, first.record.server_versions
        );
    }
    Ok(())
}

/// Copies the run records of shard `s` into `out/runs`, and each run's folder from the shard's
/// store into `store`, at the same place relative to it.
fn copy_runs(s: &ShardStore, out: &Path, store: &Path) -> Result<(), Failure> {
    let runs = s.dir.join("runs");
    let Ok(entries) = std::fs::read_dir(&runs) else {
        return Ok(());
    };
    let mut records: BTreeMap<String, PathBuf> = BTreeMap::new();
    for e in entries.flatten() {
        records.insert(e.file_name().to_string_lossy().into_owned(), e.path());
    }
    for (name, path) in records {
        let bytes = std::fs::read(&path).map_err(|source| Failure::ReadInput {
            path: path.clone(),
            source,
        })?;
        if let Ok(summary) = serde_json::from_slice::<RunSummary>(&bytes) {
            if let Some(rel) = &summary.run {
                copy_run(&s.store, store, rel)?;
            }
        }
        write(&out.join("runs").join(name), &bytes)?;
    }
    Ok(())
}
