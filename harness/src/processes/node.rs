//! What callers may know about a node: where to reach it, its process and its state.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Lifecycle state of a node's process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeState {
    /// Started, answered its readiness probe, and not paused.
    Running,
    /// Stopped with SIGSTOP by [`crate::processes::Supervisor::pause`].
    Paused,
    /// Killed on purpose by the supervisor (kill, stop, drop).
    Killed,
    /// Exited without the supervisor asking; holds how ("exit code 1", "signal 11").
    Crashed(String),
}

/// A snapshot of one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInfo {
    /// The node's name, unique in its run; also its folder name.
    pub name: String,
    /// Where clients connect: `127.0.0.1:<port>`. Stays the same across restarts.
    pub addr: SocketAddr,
    /// The pid of the current (or last) process.
    pub pid: u32,
    /// State when the snapshot was taken.
    pub state: NodeState,
    /// `<run_dir>/nodes/<name>/`: config, `server.log`, `console.log`, `data/`.
    pub dir: PathBuf,
    /// Time from spawn to the first successful readiness probe of the current process.
    pub startup: Duration,
}
