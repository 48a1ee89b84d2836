//! Starting Hazelcast members behind lockpick's proxies: one member port each, reached through
//! a router that tells the dialing members apart (Hazelcast, like etcd, knows a member by one
//! advertised address, the same for every peer), a client port behind the member's client
//! proxy, and a REST port for the probes, which no fault touches.

use super::process::HzOptions;
use crate::cluster::error::ClusterError;
use crate::cluster::net::Routing;
use crate::cluster::start::{start_members, Cluster};
use crate::processes::{reserve_port, NodeKind, Supervisor};
use crate::proxy::FaultProxies;
use std::net::SocketAddr;
use tokio::sync::Mutex;

/// Starts members named `names` under `supervisor` on the jars of `class_path`, member links
/// through `proxies` (`n1-to-n2` …) and one client proxy per member (`n1` …), the CP Subsystem
/// on over all of them or (`cp` false) off, each with a clock the nemesis moves when `faketime`.
/// Returns once every member is in the CP Subsystem (CP off: healthy), with each member's REST
/// address in member order. Precondition: no node or proxy of these names exists yet.
pub(super) async fn start_hz_cluster(
    supervisor: &Mutex<Supervisor>,
    proxies: &FaultProxies,
    names: &[String],
    class_path: &str,
    cp: bool,
    faketime: bool,
) -> Result<(Cluster, Vec<SocketAddr>), ClusterError> {
    let mut rests = vec![SocketAddr::from(([127, 0, 0, 1], 0)); names.len()];
    let cluster = start_members(
        supervisor,
        proxies,
        names,
        &[""],
        Routing::ByDialer,
        |net, member| {
            let routers: Vec<SocketAddr> = names
                .iter()
                .map(|n| net.peer_addr(n, "").expect("a router per member"))
                .collect();
            // Another process may take it before the member binds it: the member then fails
            // as for any taken port, and the cluster starts again on new ports.
            let rest = reserve_port().expect("a free loopback port for the REST endpoint");
            let mut options = HzOptions::member(
                member.peer_ports[0],
                routers[member.index],
                routers,
                rest,
                cp,
            );
            options.class_path = class_path.to_owned();
            rests[member.index] = options.rest_addr();
            options.faketime = faketime;
            NodeKind::new(options)
        },
    )
    .await?;
    Ok((cluster, rests))
}
