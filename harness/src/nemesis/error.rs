//! Errors of the nemesis.

/// Why a fault could not be applied or undone. Messages read after "failed to …".
#[derive(Debug, thiserror::Error)]
pub enum NemesisError {
    #[error(transparent)]
    Proxy(#[from] crate::proxy::ProxyError),
    #[error(transparent)]
    Cluster(#[from] crate::cluster::ClusterError),
    #[error(transparent)]
    Db(#[from] crate::db::DbError),
    #[error("apply {fault} to the cluster: this backend has no peer network")]
    NotACluster { fault: &'static str },
}
