//! The on-disk results of a run (`results.json`), versioned like the history.

pub use crate::lock::LinSummary;
use crate::lock::LockReport;
use crate::verdict::Verdict;
use serde::{Deserialize, Serialize};

/// Version of the results format written by this build.
pub const RESULTS_VERSION: u32 = 1;

/// Everything a run concluded, written as `results.json` in its store folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResults {
    /// Format version, [`RESULTS_VERSION`] when written by this build.
    pub v: u32,
    pub scenario: String,
    /// Backend name (`redis`, `redis-naive`, …).
    pub backend: String,
    pub seed: u64,
    /// The verdict of every check (lock safety, linearizability), merged.
    pub verdict: Verdict,
    /// What the scenario expected, if it said.
    pub expected: Option<Verdict>,
    /// True when SIGINT/SIGTERM cut the workload short.
    pub interrupted: bool,
    /// How long the workload ran, in milliseconds.
    pub workload_ms: u64,
    /// Client operations completed.
    pub ops: u64,
    /// The history file, relative to the run folder.
    pub history: String,
    /// The command that repeats this run.
    pub reproduce: String,
    /// The lock checker's findings.
    pub lock: LockReport,
    /// Linearizability of the lock operations against a lock model; absent in results
    /// written before it was checked.
    #[serde(default)]
    pub linearizability: Option<LinSummary>,
    /// Why no fault of the run opened a window for a violation (the verdict is then
    /// not-exposed, unless a violation or a deadlock was found anyway); absent when one did.
    /// Written `not_tested` before exposure was judged per fault instance.
    #[serde(default, alias = "not_tested", skip_serializing_if = "Option::is_none")]
    pub not_exposed: Option<String>,
    /// What exposed the run, when a fault did (`reached` before).
    #[serde(default, alias = "reached", skip_serializing_if = "Option::is_none")]
    pub exposed_by: Option<String>,
    /// Every fault instance of the run judged by its exposure rule (docs/exposure.md); absent
    /// in results written before, and for a history checked without its scenario.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exposures: Option<crate::exposure::Exposures>,
    /// The server the run used, with the version it reported; absent in results written
    /// before it was recorded.
    #[serde(default)]
    pub server: Option<ServerRan>,
    /// How the clients used a granted lock: `trusting` (wrote at once) or `careful` (checked
    /// the lease first); absent in results written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discipline: Option<String>,
    /// The lock library an adapter ran and its version, as its hello named them
    /// (`Redisson 3.52.0`); absent for a built-in client and in results written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// The scenario's description (what it does and why it breaks or holds); absent when it
    /// has none and in results written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The server a run used: its kind, the release the scenario picked, and the version the
/// running server itself reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerRan {
    /// The server kind (`etcd`).
    pub kind: String,
    /// `[server] version` (`3.6`), or the kind's default; `None` for a kind without versions.
    #[serde(default)]
    pub release: Option<String>,
    /// What the running server reported (`3.6.16`); `None` when it cannot say.
    #[serde(default)]
    pub version: Option<String>,
    /// Which start of the servers the run used, and which of its runs this was
    /// (`20261125T211200Z-4711-3, its run 2`): consecutive runs of a matrix row can share one
    /// start, reset in between (`run.json`'s `server_instance` has the details). `None` for runs
    /// stored before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
}

impl ServerRan {
    /// How reports name it: `etcd 3.6.16` (what the server reported), else the release asked
    /// for and that it did not say, else the kind alone.
    pub fn describe(&self) -> String {
        match (&self.version, &self.release) {
            (Some(v), _) => format!("{} {v}", self.kind),
            (None, Some(r)) => format!("{} {r} (its version not reported)", self.kind),
            (None, None) => self.kind.clone(),
        }
    }
}

impl RunResults {
    /// Completed client operations per second of workload.
    pub fn ops_per_sec(&self) -> f64 {
        self.ops as f64 / (self.workload_ms.max(1) as f64 / 1000.0)
    }
}
