//! Errors of the cluster peer network.

/// Why the peer network could not be built or changed. Messages read after "failed to …".
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error(transparent)]
    Proxy(#[from] crate::proxy::ProxyError),
    #[error(transparent)]
    Process(#[from] crate::processes::ProcessError),
    #[error("start the peer router of member {member}: {source}")]
    Router {
        member: String,
        #[source]
        source: std::io::Error,
    },
}
