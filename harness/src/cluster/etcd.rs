//! Starting an etcd cluster behind lockpick's proxies: peer ports reserved, the peer network
//! built in front of them, the members started together, then a client proxy per member.

use super::error::ClusterError;
use super::net::{ClusterNet, MemberPorts, Routing};
use crate::db::{reserve_port, DbError, EtcdOptions, MemberSpec, NodeInfo, NodeKind, Supervisor};
use crate::proxy::FaultProxies;
use std::net::SocketAddr;
use tokio::sync::Mutex;

/// A running etcd cluster.
pub struct EtcdCluster {
    /// The member client proxies (named after the members), in member order.
    pub client_addrs: Vec<SocketAddr>,
    /// The members as started (their `addr` is the direct client address, past the proxy).
    pub members: Vec<NodeInfo>,
    pub net: ClusterNet,
}

/// Starts etcd members named `names` under `supervisor`, their peer links through `proxies`
/// (`n1-to-n2` …) and one client proxy per member (`n1` …). Returns once every member sees a
/// leader. Precondition: no node or proxy of these names exists yet.
pub async fn start_etcd_cluster(
    supervisor: &Mutex<Supervisor>,
    proxies: &FaultProxies,
    names: &[String],
) -> Result<EtcdCluster, ClusterError> {
    let mut supervisor = supervisor.lock().await;
    let reserve = |name: &str| {
        reserve_port().map_err(|source| DbError::Port {
            node: name.to_owned(),
            source,
        })
    };
    let mut reserved = Vec::new();
    let mut members = Vec::new();
    for name in names {
        let (client, peer) = (reserve(name)?, reserve(name)?);
        members.push(MemberPorts {
            name: name.clone(),
            dir: supervisor.node_dir(name),
            ports: vec![(String::new(), peer.port())],
        });
        reserved.push((name.clone(), client, peer));
    }
    let net = ClusterNet::create(proxies, &members, Routing::ByDialer).await?;
    let cluster: Vec<(String, SocketAddr)> = names
        .iter()
        .map(|n| {
            (
                n.clone(),
                net.peer_addr(n, "").expect("a router per member"),
            )
        })
        .collect();
    let specs = reserved
        .into_iter()
        .map(|(name, client, peer)| MemberSpec {
            kind: NodeKind::Etcd(EtcdOptions::member(&name, peer.port(), cluster.clone())),
            name,
            client,
            other_ports: vec![peer],
        })
        .collect();
    let started = supervisor.start_cluster(specs).await?;
    drop(supervisor);
    let mut client_addrs = Vec::new();
    for info in &started {
        client_addrs.push(proxies.create(&info.name, info.addr).await?);
    }
    Ok(EtcdCluster {
        client_addrs,
        members: started,
        net,
    })
}
