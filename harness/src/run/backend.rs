//! Starting a scenario's servers (or reaching a user's, `--external`), each node behind a proxy,
//! and building a run's clients on the addresses they hand back. Nothing here knows a
//! server or client kind by name: see [`crate::server`] and [`crate::client::ClientKind`].

use super::error::RunError;
use crate::client::{BuildCtx, Clients};
use crate::cluster::ClusterNet;
use crate::processes::Supervisor;
use crate::proxy::FaultProxies;
use crate::scenario::Scenario;
use crate::server::{external, Endpoints, StartCtx, StartError};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use tokio::sync::Mutex;

/// A backend's started nodes: what clients reach, its peer network if it is a cluster, and
/// its version as the server reported it.
pub(super) struct Nodes {
    pub(super) endpoints: Endpoints,
    pub(super) cluster: Option<Arc<ClusterNet>>,
    pub(super) version: Option<String>,
}

/// Starts the lock nodes of `scenario`, each behind a proxy named after the node. With
/// `external` addresses (one per node, checked by [`Scenario::check_external`]) nothing is
/// started: the proxies go in front of those servers.
pub(super) async fn start_nodes(
    scenario: &Scenario,
    supervisor: &Mutex<Supervisor>,
    proxies: &FaultProxies,
    external_addrs: &[SocketAddr],
) -> Result<Nodes, RunError> {
    let started = if external_addrs.is_empty() {
        let ctx = StartCtx {
            supervisor,
            proxies,
            nodes: scenario.node_names(),
            persistence: scenario.persistence,
            faketime: scenario.has_clock_faults(),
            version: scenario.version,
        };
        scenario.server.start(ctx).await?
    } else {
        external(proxies, &scenario.node_names(), external_addrs).await?
    };
    let version = running_version(scenario, &started.endpoints, external_addrs.is_empty()).await?;
    Ok(Nodes {
        endpoints: started.endpoints,
        cluster: started.cluster,
        version,
    })
}

/// Builds the scenario's clients on the nodes' addresses (their proxies), for one run.
pub(super) fn build_clients(
    scenario: &Scenario,
    endpoints: &Endpoints,
    run_dir: &Path,
) -> Result<Box<dyn Clients>, RunError> {
    scenario
        .client
        .options
        .build(&BuildCtx {
            lock: &scenario.lock,
            endpoints,
            run_dir,
        })
        .map_err(|e| RunError::Client {
            client: scenario.client.kind.name(),
            message: e,
        })
}

/// The version the first node reports, through its proxy (no fault is on yet), checked
/// against the release the scenario asked for: a run's record names what really ran, and a
/// stale build that answers with another version fails the run instead of mislabelling it.
/// A kind that cannot say gives `None`; so does an external server that does not answer. An
/// external server (`ours` false) runs whatever its owner installed: recorded, not checked.
async fn running_version(
    scenario: &Scenario,
    endpoints: &Endpoints,
    ours: bool,
) -> Result<Option<String>, StartError> {
    let Some(&(_, addr)) = endpoints.nodes.first() else {
        return Ok(None);
    };
    let mut reported = None;
    // A member just elected may be slow to answer under load: a few tries.
    for _ in 0..3 {
        reported = scenario.server.running_version(addr).await;
        if reported.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    match (scenario.version, &reported) {
        (Some(asked), Some(v)) if ours && !asked.matches(v) => Err(StartError::WrongVersion {
            kind: scenario.server.name(),
            asked: asked.name,
            reported: v.clone(),
            hint: asked.mismatch_hint(),
        }),
        _ => Ok(reported),
    }
}
