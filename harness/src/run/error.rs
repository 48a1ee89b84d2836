//! Why a run could not be carried out (as opposed to a verdict, which is data).

use std::path::{Path, PathBuf};

/// A harness failure: the run could not start, or its machinery broke.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("write the store at {path}: {source}")]
    Store {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Process(#[from] crate::processes::ProcessError),
    #[error(transparent)]
    Proxy(#[from] crate::proxy::ProxyError),
    #[error(transparent)]
    Nemesis(#[from] crate::nemesis::NemesisError),
    #[error(transparent)]
    Cluster(#[from] crate::cluster::ClusterError),
    #[error(transparent)]
    Record(#[from] crate::recorder::RecordError),
    /// The scenario cannot run on the external servers it was given (see
    /// [`crate::scenario::Scenario::check_external`]).
    #[error("{0}")]
    External(String),
    /// A command-line override the scenario cannot take (see
    /// [`crate::scenario::check_overrides`]).
    #[error("{0}")]
    Options(String),
    /// An `--external` node did not accept a connection when the run started.
    #[error("reach external node {node} at {addr}: {reason}; is its server running, and is --external in node order (n1, n2, …)?")]
    Unreachable {
        node: String,
        addr: std::net::SocketAddr,
        reason: String,
    },
    /// A server kind could not start its nodes.
    #[error(transparent)]
    Server(#[from] crate::server::StartError),
    #[error("build the {client} clients: {message}")]
    Client {
        client: &'static str,
        message: String,
    },
    #[error("connect to the protected resource: {0}")]
    Resource(String),
    /// A client adapter could not be started or broke the client protocol.
    #[error(transparent)]
    Adapter(#[from] Box<crate::client::process::AdapterError>),
    /// The server kind's watcher could not watch the nodes (see [`crate::server::Watch`]).
    #[error("watch the servers: {0}")]
    Watch(String),
    /// A lock server (or the resource's) exited during the run without a fault killing it.
    #[error("server node {node} exited on its own during the run ({how}), not killed by a fault: no verdict from a run whose server died outside its plan; its log: {}", log.display())]
    ServerExited {
        node: String,
        how: String,
        log: PathBuf,
    },
    #[error("read back the server record: {0}")]
    ReadServerRecord(#[from] lockpick_checker::server_record::ServerReadError),
    #[error("read back the history: {0}")]
    ReadHistory(#[from] lockpick_checker::history::ReadError),
}

impl RunError {
    pub(crate) fn store(path: &Path, source: std::io::Error) -> RunError {
        RunError::Store {
            path: path.to_owned(),
            source,
        }
    }
}
