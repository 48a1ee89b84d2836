//! Starting a ZooKeeper ensemble behind lockpick's proxies: quorum and election ports reserved,
//! the peer network built in front of them, the servers started together, then a client proxy
//! per server.

use super::error::ClusterError;
use super::net::{ClusterNet, MemberPorts, Routing};
use crate::db::{
    reserve_port, DbError, MemberSpec, NodeInfo, NodeKind, Supervisor, ZkOptions, ZkPeer,
};
use crate::proxy::FaultProxies;
use std::net::SocketAddr;
use tokio::sync::Mutex;

const QUORUM: &str = "quorum";
const ELECTION: &str = "election";

/// A running ZooKeeper ensemble.
pub struct ZkCluster {
    /// The server client proxies (named after the servers), in server order.
    pub client_addrs: Vec<SocketAddr>,
    /// The servers as started (their `addr` is the direct client address).
    pub members: Vec<NodeInfo>,
    pub net: ClusterNet,
}

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
        let (client, quorum, election) = (reserve(name)?, reserve(name)?, reserve(name)?);
        members.push(MemberPorts {
            name: name.clone(),
            dir: supervisor.node_dir(name),
            ports: vec![
                (QUORUM.to_owned(), quorum.port()),
                (ELECTION.to_owned(), election.port()),
            ],
        });
        reserved.push((name.clone(), client, quorum, election));
    }
    let net = ClusterNet::create(proxies, &members, Routing::PerLink).await?;
    let local = |port: u16| SocketAddr::from(([127, 0, 0, 1], port));
    let mut specs = Vec::new();
    for (index, (name, client, quorum, election)) in reserved.into_iter().enumerate() {
        let me = ZkPeer {
            id: index as u32 + 1,
            quorum: local(quorum.port()),
            election: local(election.port()),
        };
        // Each server's config names, for every other server, the proxies of its own links.
        let peers = names
            .iter()
            .enumerate()
            .filter(|(_, other)| **other != name)
            .map(|(i, other)| ZkPeer {
                id: i as u32 + 1,
                quorum: net
                    .link_addr(&name, other, QUORUM)
                    .expect("a proxy per link"),
                election: net
                    .link_addr(&name, other, ELECTION)
                    .expect("a proxy per link"),
            })
            .collect();
        let mut options = ZkOptions::server(me, peers);
        options.tick_ms = tick_ms;
        specs.push(MemberSpec {
            kind: NodeKind::ZooKeeper(options),
            name,
            client,
            other_ports: vec![quorum, election],
        });
    }
    let started = supervisor.start_cluster(specs).await?;
    drop(supervisor);
    let mut client_addrs = Vec::new();
    for info in &started {
        client_addrs.push(proxies.create(&info.name, info.addr).await?);
    }
    Ok(ZkCluster {
        client_addrs,
        members: started,
        net,
    })
}
