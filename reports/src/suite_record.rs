//! The record of one `lockpick suite` run (`store/suite/<time>/suite.json`): every scenario ×
//! seed it ran, what each reached and why it failed. The JUnit file and the trend page are both
//! made from it. Versioned like the history and results.

use crate::error::ReportError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Version of the suite record written by this build.
pub const SUITE_VERSION: u32 = 1;

/// Folder of the store that holds suite runs, beside the scenarios' folders.
pub const SUITE_DIR: &str = "suite";

/// The file each suite run folder holds.
pub const SUITE_FILE: &str = "suite.json";

/// One `lockpick suite` invocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteRecord {
    /// Format version, [`SUITE_VERSION`] when written by this build.
    pub v: u32,
    /// `YYYYMMDDTHHMMSSZ` when the suite started; also its folder's name.
    pub started: String,
    /// Seconds the whole suite took.
    pub secs: f64,
    /// The lockpick version that ran it.
    pub lockpick_version: String,
    /// The command line, to run the same suite again.
    pub command: String,
    /// Runs per scenario.
    pub seeds: u64,
    /// True when SIGINT/SIGTERM stopped the suite before every run was made.
    pub interrupted: bool,
    /// `K/N` when this record holds shard K of N of the suite's runs (`--shard`); `lockpick
    /// merge` joins the shards' records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// For a merged record: the shards (`K/N`) whose stores were not given, so their runs are
    /// missing here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_shards: Vec<String>,
    pub cases: Vec<SuiteCase>,
}

/// One scenario × seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteCase {
    pub scenario: String,
    pub seed: u64,
    /// The verdict the scenario promises.
    pub expected: String,
    pub status: CaseStatus,
    /// The verdict reached, when the run finished.
    pub verdict: Option<String>,
    /// Why the case did not pass: the violation sentences of an unexpected verdict, the harness
    /// error, or why it was skipped. Empty when it passed.
    pub message: String,
    /// The command that repeats this case.
    pub reproduce: String,
    /// The run's store folder, relative to the store root (`<scenario>/<run-id>`).
    pub run: Option<String>,
    pub secs: f64,
    pub ops: u64,
}

/// How one case ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CaseStatus {
    /// The run reached its expected verdict.
    Passed,
    /// The run finished with another verdict: a safety regression (or a lucky escape).
    Mismatch,
    /// The harness failed: a server did not start, a binary is missing, the store broke.
    Error,
    /// Not run: the time budget was spent, or the suite was interrupted first.
    Skipped,
}

impl CaseStatus {
    pub fn name(self) -> &'static str {
        match self {
            CaseStatus::Passed => "passed",
            CaseStatus::Mismatch => "mismatch",
            CaseStatus::Error => "error",
            CaseStatus::Skipped => "skipped",
        }
    }
}

impl SuiteRecord {
    /// How many cases ended with `status`.
    pub fn count(&self, status: CaseStatus) -> usize {
        self.cases.iter().filter(|c| c.status == status).count()
    }
}

/// Writes `record` to `dir/suite.json` whole or not at all (a reader never sees half a file).
pub fn write_suite_record(dir: &Path, record: &SuiteRecord) -> Result<PathBuf, ReportError> {
    let path = dir.join(SUITE_FILE);
    let text = serde_json::to_vec_pretty(record).expect("a suite record serializes");
    crate::atomic_write::write_atomic(&path, &text)?;
    Ok(path)
}

/// Reads one suite record.
pub fn read_suite_record(path: &Path) -> Result<SuiteRecord, ReportError> {
    let text = std::fs::read(path).map_err(|source| ReportError::Read {
        path: path.to_owned(),
        source,
    })?;
    let record: SuiteRecord = serde_json::from_slice(&text).map_err(|e| ReportError::Parse {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    if record.v != SUITE_VERSION {
        return Err(ReportError::Parse {
            path: path.to_owned(),
            message: format!(
                "suite record version {} is not one this build reads (it reads {SUITE_VERSION})",
                record.v
            ),
        });
    }
    Ok(record)
}

/// Every suite record under `store/suite/`, oldest first, and the ones that could not be read
/// (with the reason).
pub fn read_suite_history(store: &Path) -> (Vec<SuiteRecord>, Vec<String>) {
    let mut records = Vec::new();
    let mut unreadable = Vec::new();
    let Ok(entries) = std::fs::read_dir(store.join(SUITE_DIR)) else {
        return (records, unreadable);
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for dir in dirs {
        let path = dir.join(SUITE_FILE);
        if !path.exists() {
            // A suite still running, or one killed before it wrote anything.
            unreadable.push(format!("{}: no {SUITE_FILE}", dir.display()));
            continue;
        }
        match read_suite_record(&path) {
            Ok(r) => records.push(r),
            Err(e) => unreadable.push(e.to_string()),
        }
    }
    (records, unreadable)
}
