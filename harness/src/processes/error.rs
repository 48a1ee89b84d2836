//! Errors of the backend supervisor.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

/// Why the supervisor could not do what it was asked. Messages read after "failed to …".
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// The server binary is not installed; `package` is the Debian package that provides it.
    #[error("find {binary} (install the Debian package `{package}`, e.g. with scripts/setup)")]
    MissingBinary {
        binary: PathBuf,
        package: &'static str,
    },
    /// Node names become folder names, so they are restricted.
    #[error("use node name {name:?}: only ASCII letters, digits, '-', '_' and '.' are allowed")]
    InvalidName { name: String },
    /// The node's options cannot be turned into a valid config.
    #[error("configure node {node}: {reason}")]
    InvalidOptions { node: String, reason: String },
    /// A replica could not be made a primary.
    #[error("promote node {node}: {reason}")]
    Promote { node: String, reason: String },
    /// A node of that name is already managed by this supervisor.
    #[error("start node {name}: a node of that name already exists in this run")]
    DuplicateNode { name: String },
    /// Preparing the node folder, its config or its log failed.
    #[error("prepare folder {path} of node {node}: {source}")]
    Folder {
        node: String,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// No free loopback port could be found.
    #[error("pick a free loopback port for node {node}: {source}")]
    Port {
        node: String,
        #[source]
        source: io::Error,
    },
    /// A cluster member could not bind one of its ports: another process took it between our
    /// choice and the member's start. Every member was stopped; a new attempt with new ports
    /// may succeed.
    #[error("start the cluster: a port was taken before its member bound it: {source}")]
    ClusterPortTaken {
        #[source]
        source: Box<ProcessError>,
    },
    /// fork/exec failed.
    #[error("spawn {binary} for node {node}: {source}")]
    Spawn {
        node: String,
        binary: PathBuf,
        #[source]
        source: io::Error,
    },
    /// [`crate::processes::kill_all_children`] was called; the process is shutting down.
    #[error("spawn node {node}: lockpick is shutting down")]
    ShuttingDown { node: String },
    /// The server exited before it answered its readiness probe.
    #[error("start node {node} on {addr}: it exited ({status}) before becoming ready; log tail:\n{log_tail}")]
    ExitedEarly {
        node: String,
        addr: String,
        status: String,
        log_tail: String,
    },
    /// The server did not answer its readiness probe in time; it has been killed.
    #[error("start node {node} on {addr}: not ready after {timeout:?}; log tail:\n{log_tail}")]
    NotReady {
        node: String,
        addr: String,
        timeout: Duration,
        log_tail: String,
    },
    /// No node of that name in this supervisor.
    #[error("find node {name}: no such node in this run")]
    UnknownNode { name: String },
    /// The node's process is not alive, so it cannot be signalled.
    #[error("signal node {node} with {signal}: it is not running")]
    NotRunning { node: String, signal: &'static str },
    /// kill(2) failed.
    #[error("signal node {node} (pid {pid}) with {signal}: {source}")]
    Signal {
        node: String,
        pid: u32,
        signal: &'static str,
        #[source]
        source: io::Error,
    },
}
