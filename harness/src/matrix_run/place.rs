//! Where a matrix lives: a fresh folder under `STORE/matrix/<time>/`, or the folder being
//! resumed, with the file its cells come from and the shard it holds.

use super::{MatrixRequest, MatrixRunError};
use crate::matrix::{folder_of, Shard};
use crate::run::utc_stamp;
use lockpick_reports::matrix::{ExpectationSource, MatrixRecord, MATRIX_DIR};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Where the matrix lives and where its file comes from.
pub(super) struct Place {
    pub dir: PathBuf,
    pub file: PathBuf,
    /// The folder the matrix file was given in: its relative paths resolve against it.
    pub folder: PathBuf,
    pub started: String,
    pub fresh: bool,
    /// Copy `file` into the folder as its `matrix.toml`.
    pub copy_file: bool,
    /// The shard of the runs this folder holds (`--shard`, or the one it was started with).
    pub shard: Option<Shard>,
    /// For a merged matrix: the shards whose runs are missing.
    pub missing_shards: Vec<String>,
    /// The folder's `matrix.json` when resuming, read once.
    pub recorded: Option<MatrixRecord>,
    /// The matrix file as git had it when the first run began (kept across resumes).
    pub expectations: Option<ExpectationSource>,
}

/// The place `req` asks for: the folder it resumes, or a new one.
pub(super) fn place(req: &MatrixRequest) -> Result<Place, MatrixRunError> {
    match &req.resume {
        Some(resume) => resumed(req, resume),
        None => Ok(fresh(req)),
    }
}

/// The matrix folder `resume` names (empty: the newest in the store), as it was left.
fn resumed(req: &MatrixRequest, resume: &Path) -> Result<Place, MatrixRunError> {
    let dir = if resume.as_os_str().is_empty() {
        newest_matrix(&req.store.join(MATRIX_DIR)).ok_or_else(|| {
            MatrixRunError::Input(format!(
                "resume: no matrix under {}",
                req.store.join(MATRIX_DIR).display()
            ))
        })?
    } else {
        resume.to_owned()
    };
    let copy = dir.join("matrix.toml");
    if !copy.is_file() {
        return Err(MatrixRunError::Input(format!(
            "resume {}: it holds no matrix.toml (is it a folder `lockpick matrix` made?)",
            dir.display()
        )));
    }
    let started = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let recorded = std::fs::read(dir.join("matrix.json"))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<MatrixRecord>(&bytes).ok());
    // A matrix's runs come from one build: their verdicts and exposures are that build's
    // checker's. Its page may be made again by any (--report-only; --recheck names its own).
    if let Some(was) = recorded.as_ref().map(|r| &r.lockpick_version) {
        if !req.report_only && was != crate::LOCKPICK_BUILD {
            return Err(MatrixRunError::Input(format!(
                "resume {}: its runs were made by lockpick {was}, and this is lockpick {}: one matrix's runs come from one build; allowed: resume it with a build of that commit (`git worktree add DIR COMMIT`, then `cargo build --release` there), or --report-only to make its page again",
                dir.display(),
                crate::LOCKPICK_BUILD
            )));
        }
    }
    // A file given with --resume replaces the copy (new expectations or notes); the runs
    // already made are kept, so a changed fault size needs --redo.
    let (file, copy_file, folder) = match &req.file {
        Some(f) => (f.clone(), true, folder_of(f)),
        None => {
            let folder = recorded
                .as_ref()
                .and_then(|r| r.file_folder.as_ref())
                .map_or_else(|| dir.clone(), PathBuf::from);
            (copy, false, folder)
        }
    };
    let (was, missing_shards) = recorded_shard(&dir, recorded.as_ref())?;
    let shard = match (req.shard, was) {
        (Some(asked), Some(was)) if asked != was => {
            return Err(MatrixRunError::Input(format!(
                "resume {} with --shard {asked}: it holds shard {was}; allowed: --shard {was}, or no --shard",
                dir.display()
            )))
        }
        (asked, was) => asked.or(was),
    };
    let expectations = recorded
        .as_ref()
        .and_then(|r| r.expectations.clone())
        .map(|mut e| {
            // A file given anew brings the expectations as they are now: say if they
            // changed since the runs began.
            if copy_file {
                e.changed_after = super::expectation_change::changed_after(&e, &file);
            }
            e
        });
    Ok(Place {
        dir,
        file,
        folder,
        started,
        fresh: false,
        copy_file,
        shard,
        missing_shards,
        expectations,
        recorded,
    })
}

/// A new folder for the matrix `req` names (its file, or the default one).
fn fresh(req: &MatrixRequest) -> Place {
    let file = req.file.clone().unwrap_or_else(|| req.default_file.clone());
    let started = utc_stamp(SystemTime::now());
    let expectations = Some(super::provenance::expectation_source(&file));
    let root = req.store.join(MATRIX_DIR);
    // Two matrices started in one second get folders of their own.
    let mut dir = root.join(&started);
    let mut n = 2;
    while dir.exists() {
        dir = root.join(format!("{started}-{n}"));
        n += 1;
    }
    let started = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or(started);
    Place {
        dir,
        folder: folder_of(&file),
        file,
        started,
        fresh: true,
        copy_file: true,
        shard: req.shard,
        missing_shards: Vec::new(),
        recorded: None,
        expectations,
    }
}

/// The shard a matrix folder was started as, and the shards a merged one lacks, as its
/// `matrix.json` (`record`, read from `dir`) records them.
fn recorded_shard(
    dir: &Path,
    record: Option<&MatrixRecord>,
) -> Result<(Option<Shard>, Vec<String>), MatrixRunError> {
    let Some(record) = record else {
        return Ok((None, Vec::new()));
    };
    let shard = match &record.shard {
        Some(s) => Some(s.parse::<Shard>().map_err(|e| {
            MatrixRunError::Input(format!(
                "read {}: shard {e}",
                dir.join("matrix.json").display()
            ))
        })?),
        None => None,
    };
    Ok((shard, record.missing_shards.clone()))
}

/// The newest matrix folder under `root` (names are UTC stamps, so the greatest name).
pub fn newest_matrix(root: &Path) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("matrix.toml").is_file())
        .collect();
    dirs.sort();
    dirs.pop()
}
