//! Why the nemesis could not apply a fault.

/// A fault that could not be applied: through the proxy, or on a node's process.
#[derive(Debug, thiserror::Error)]
pub enum NemesisError {
    #[error(transparent)]
    Proxy(#[from] crate::proxy::ProxyError),
    #[error(transparent)]
    Db(#[from] crate::db::DbError),
}
