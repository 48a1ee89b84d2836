//! Starting an etcd cluster behind lockpick's proxies: one peer port per member, reached
//! through a router that tells the dialing members apart.

use crate::backends::etcd::EtcdOptions;
use crate::cluster::error::ClusterError;
use crate::cluster::net::Routing;
use crate::cluster::start::{start_members, Cluster};
use crate::processes::{NodeKind, Supervisor};
use crate::proxy::FaultProxies;
use std::net::SocketAddr;
use std::path::Path;
use tokio::sync::Mutex;

/// A running etcd cluster.
pub type EtcdCluster = Cluster;

/// Starts etcd members named `names` under `supervisor`, their peer links through `proxies`
/// (`n1-to-n2` …) and one client proxy per member (`n1` …). Returns once every member sees a
/// leader. Precondition: no node or proxy of these names exists yet.
pub async fn start_etcd_cluster(
    supervisor: &Mutex<Supervisor>,
    proxies: &FaultProxies,
    names: &[String],
) -> Result<EtcdCluster, ClusterError> {
    start_etcd_cluster_of(supervisor, proxies, names, Path::new("etcd")).await
}

/// [`start_etcd_cluster`] with the members' `binary` (another etcd release than Debian's).
pub async fn start_etcd_cluster_of(
    supervisor: &Mutex<Supervisor>,
    proxies: &FaultProxies,
    names: &[String],
    binary: &Path,
) -> Result<EtcdCluster, ClusterError> {
    start_members(
        supervisor,
        proxies,
        names,
        &[""],
        Routing::ByDialer,
        |net, member| {
            // Every member names each member at its router, the same address for all.
            let cluster: Vec<(String, SocketAddr)> = names
                .iter()
                .map(|n| {
                    (
                        n.clone(),
                        net.peer_addr(n, "").expect("a router per member"),
                    )
                })
                .collect();
            let mut options = EtcdOptions::member(member.name, member.peer_ports[0], cluster);
            options.binary = binary.to_owned();
            NodeKind::new(options)
        },
    )
    .await
}
