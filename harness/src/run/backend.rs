//! Starting a scenario's servers (or reaching a user's, `--external`), each node behind a proxy,
//! and building the scenario's clients on the addresses they hand back. Nothing here knows a
//! server or client kind by name: see [`crate::server`] and [`crate::client::ClientKind`].

use super::error::RunError;
use crate::client::{BuildCtx, Clients};
use crate::cluster::ClusterNet;
use crate::db::Supervisor;
use crate::proxy::FaultProxies;
use crate::scenario::Scenario;
use crate::server::{external, StartCtx};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use tokio::sync::Mutex;

/// A started backend: its clients, and its peer network if it is a cluster.
pub(super) struct Backend {
    pub(super) clients: Box<dyn Clients>,
    pub(super) cluster: Option<Arc<ClusterNet>>,
}

/// Starts the lock nodes of `scenario`, each behind a proxy named after the node, and builds
/// the clients that reach them through those proxies. With `external` addresses (one per
/// node, checked by [`Scenario::check_external`]) nothing is started: the proxies go in front
/// of those servers.
pub(super) async fn start_backend(
    scenario: &Scenario,
    supervisor: &Mutex<Supervisor>,
    proxies: &FaultProxies,
    external_addrs: &[SocketAddr],
    run_dir: &Path,
) -> Result<Backend, RunError> {
    let started = if external_addrs.is_empty() {
        let ctx = StartCtx {
            supervisor,
            proxies,
            nodes: scenario.node_names(),
            persistence: scenario.persistence,
            faketime: scenario.has_clock_faults(),
        };
        scenario.server.start(ctx).await?
    } else {
        external(proxies, &scenario.node_names(), external_addrs).await?
    };
    let clients = scenario
        .client
        .options
        .build(&BuildCtx {
            lock: &scenario.lock,
            endpoints: &started.endpoints,
            run_dir,
        })
        .map_err(|e| RunError::Client {
            client: scenario.client.kind.name(),
            message: e,
        })?;
    Ok(Backend {
        clients,
        cluster: started.cluster,
    })
}
