//! Starting a ZooKeeper ensemble behind lockpick's proxies: a quorum and an election port per
//! server, each server's config naming the proxies of its own links.

use crate::backends::zookeeper::{ZkOptions, ZkPeer};
use crate::cluster::error::ClusterError;
use crate::cluster::net::Routing;
use crate::cluster::start::{start_members, Cluster};
use crate::processes::{NodeKind, Supervisor};
use crate::proxy::FaultProxies;
use std::net::SocketAddr;
use tokio::sync::Mutex;

const QUORUM: &str = "quorum";
const ELECTION: &str = "election";

/// A running ZooKeeper ensemble.
pub type ZkCluster = Cluster;

/// Starts ZooKeeper servers named `names` (ids 1, 2, … in that order) under `supervisor`,
/// quorum and election links through `proxies` (`n1-to-n2-quorum`, `n1-to-n2-election` …) and
/// one client proxy per server (`n1` …). `tick_ms` is ZooKeeper's tick. Returns once every
/// server has joined the quorum.
pub async fn start_zk_cluster(
    supervisor: &Mutex<Supervisor>,
    proxies: &FaultProxies,
    names: &[String],
    tick_ms: u64,
) -> Result<ZkCluster, ClusterError> {
    let debian = super::process::DEBIAN_CLASS_PATH;
    start_zk_cluster_of(supervisor, proxies, names, tick_ms, debian).await
}

/// [`start_zk_cluster`] with the servers' `class_path` (another ZooKeeper release's jars).
pub async fn start_zk_cluster_of(
    supervisor: &Mutex<Supervisor>,
    proxies: &FaultProxies,
    names: &[String],
    tick_ms: u64,
    class_path: &str,
) -> Result<ZkCluster, ClusterError> {
    let local = |port: u16| SocketAddr::from(([127, 0, 0, 1], port));
    start_members(
        supervisor,
        proxies,
        names,
        &[QUORUM, ELECTION],
        Routing::PerLink,
        |net, member| {
            let me = ZkPeer {
                id: member.index as u32 + 1,
                quorum: local(member.peer_ports[0]),
                election: local(member.peer_ports[1]),
            };
            // Each server's config names, for every other server, the proxies of its own links.
            let peers = names
                .iter()
                .enumerate()
                .filter(|(_, other)| **other != member.name)
                .map(|(i, other)| ZkPeer {
                    id: i as u32 + 1,
                    quorum: net
                        .link_addr(member.name, other, QUORUM)
                        .expect("a proxy per link"),
                    election: net
                        .link_addr(member.name, other, ELECTION)
                        .expect("a proxy per link"),
                })
                .collect();
            let mut options = ZkOptions::server(me, peers);
            options.tick_ms = tick_ms;
            options.class_path = class_path.to_owned();
            NodeKind::new(options)
        },
    )
    .await
}
