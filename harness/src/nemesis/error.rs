//! Why the nemesis could not apply a fault.

/// A fault that could not be applied: through the proxy, or on a node's process.
#[derive(Debug, thiserror::Error)]
pub enum NemesisError {
    #[error(transparent)]
    Proxy(#[from] crate::proxy::ProxyError),
    #[error(transparent)]
    Db(#[from] crate::db::DbError),
    #[error("set the clock of node {node} in {path}: {source}")]
    Clock {
        node: String,
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("set the clock of node {node}: no such node")]
    UnknownNode { node: String },
}
