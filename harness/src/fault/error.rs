//! Why the nemesis could not apply or undo a fault.

/// A fault that could not be applied or undone: through the proxy, on the peer network, or on
/// a node's process or clock. Messages read after "failed to …".
#[derive(Debug, thiserror::Error)]
pub enum NemesisError {
    #[error(transparent)]
    Proxy(#[from] crate::proxy::ProxyError),
    #[error(transparent)]
    Cluster(#[from] crate::cluster::ClusterError),
    #[error(transparent)]
    Process(#[from] crate::processes::ProcessError),
    #[error("apply {fault} to the cluster: this backend has no peer network")]
    NotACluster { fault: &'static str },
    #[error("set the clock of node {node} in {path}: {source}")]
    Clock {
        node: String,
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("set the clock of node {node}: no such node")]
    UnknownNode { node: String },
}
