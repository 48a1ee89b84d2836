//! Why a server kind could not start its nodes: the process, its proxy, its peer network, or
//! the kind's own readiness checks.

/// A server that did not come up. Messages read after "failed to …", as the run's errors do.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Process(#[from] crate::processes::ProcessError),
    #[error(transparent)]
    Proxy(#[from] crate::proxy::ProxyError),
    #[error(transparent)]
    Cluster(#[from] crate::cluster::ClusterError),
    #[error(transparent)]
    NotInstalled(#[from] super::NotInstalled),
    /// The servers that came up report another release than the one asked for.
    #[error("start {kind} {asked}: its server reports version {reported}, which is not a {asked} release ({hint})")]
    WrongVersion {
        kind: &'static str,
        asked: &'static str,
        reported: String,
        hint: String,
    },
    #[error("start the sentinel backend: {0}")]
    Sentinel(String),
    #[error("start the PostgreSQL replica: {0}")]
    Replica(String),
}
