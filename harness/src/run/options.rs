//! What the command line may change about a run.

use crate::locks::LockPreset;
use std::net::SocketAddr;
use std::path::PathBuf;

/// Overrides and settings for one run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Seed of every random choice; the scenario's own seed when absent.
    pub seed: Option<u64>,
    /// Workload length in milliseconds instead of the scenario's.
    pub duration_ms: Option<u64>,
    /// A soak of this many milliseconds: the workload runs that long and the scenario's
    /// fault schedule recurs, drawn afresh every scenario length (see
    /// [`crate::nemesis::build_soak_schedule`]); the history is checked as it is written and
    /// this process's memory sampled (`soak.json`).
    pub soak_ms: Option<u64>,
    /// Number of clients instead of the scenario's.
    pub clients: Option<usize>,
    /// An external Toxiproxy API (`host:port`) instead of the embedded one.
    pub toxiproxy: Option<SocketAddr>,
    /// Root of the store, `store/` by default.
    pub store: PathBuf,
    /// Draw a progress bar on the terminal.
    pub progress: bool,
    /// The command that repeats this run, stored with the results.
    pub reproduce: String,
    /// Run with this lock (server and client kind) instead of the scenario's (`--backend`,
    /// `lockpick compare`); faults its server cannot take are left out (see
    /// [`crate::scenario::Scenario::with_lock`]).
    pub backend: Option<&'static LockPreset>,
    /// Keep each node's data folder after the run (by default only configs and logs stay).
    pub keep_data: bool,
    /// Servers lockpick does not start (a user's, or docker-compose's): the client address of
    /// each node, in node order. Empty: lockpick starts its own. See
    /// [`crate::scenario::Scenario::check_external`] for what such a run can do.
    pub external: Vec<SocketAddr>,
    /// A redis-server to use as the protected resource instead of starting one. Its two
    /// `lockpick:resource:*` keys are cleared at the start of the run.
    pub resource: Option<SocketAddr>,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            seed: None,
            duration_ms: None,
            soak_ms: None,
            clients: None,
            toxiproxy: None,
            store: PathBuf::from("store"),
            progress: false,
            reproduce: String::new(),
            keep_data: false,
            external: Vec::new(),
            resource: None,
            backend: None,
        }
    }
}
