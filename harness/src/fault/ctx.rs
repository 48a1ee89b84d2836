//! What every fault acts on while it runs: the proxies, the recorder, the clients' pause
//! points, the node supervisor and the peer network.

use crate::client::PausePoints;
use crate::cluster::ClusterNet;
use crate::proxy::FaultProxies;
use crate::recorder::Recorder;
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// What the nemesis acts on.
pub struct NemesisCtx {
    pub proxies: FaultProxies,
    pub recorder: Arc<Recorder>,
    /// One per logical client, by index.
    pub points: Vec<Arc<PausePoints>>,
    /// Time 0 of the schedule.
    pub start: Instant,
    /// Cancelled when the workload ends: no new fault starts.
    pub stop: CancellationToken,
    /// The run's nodes, for faults on server processes.
    pub supervisor: Arc<tokio::sync::Mutex<crate::processes::Supervisor>>,
    /// The peer network, when the backend is a cluster.
    pub cluster: Option<Arc<ClusterNet>>,
}
