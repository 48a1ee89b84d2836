//! Starting a Redis master and its replicas behind lockpick's proxies, the way a network fault
//! on one host would reach them: every connection to node `nX` arrives at a router in front of
//! it, which passes a member's connection (a replica's replication link, a sentinel's) through
//! the proxy of that directed link (`n2-to-n1`, `s1-to-n1`) and anyone else's (lockpick's
//! clients) through the node's client proxy (`n1`).
//!
//! Each node announces its router (`replica-announce-ip/port`) and replicas follow the master's
//! router, so whoever learns an address from the master or from a sentinel, before or after a
//! failover, learns a routed one. Dialers that listen nowhere lockpick routes (sentinels) are
//! members too, so that their links to the nodes can be cut apart from the clients'.

use crate::backends::redis::RedisOptions;
use crate::cluster::error::ClusterError;
use crate::cluster::net::{ClusterNet, MemberPorts, Routing};
use crate::cluster::start::Cluster;
use crate::processes::{reserve_port, MemberSpec, NodeKind, ProcessError, Supervisor};
use crate::proxy::FaultProxies;
use std::net::SocketAddr;
use tokio::sync::Mutex;

/// How many times the start is tried with new ports after one was taken.
const START_ATTEMPTS: usize = 5;

/// Starts Redis nodes named `nodes` under `supervisor` from `base`: the first a master, the
/// others its replicas, all behind routers as the module says. `dialers` are the names of the
/// other processes (sentinels, started later under these names) whose links to the nodes get
/// proxies of their own. Returns once every node answers PING (replicas may still be syncing).
/// `Cluster::net.peer_addr(node, "")` is where a node is reached through its router.
/// Precondition: no node or proxy of these names exists yet.
pub async fn start_redis_replicas(
    supervisor: &Mutex<Supervisor>,
    proxies: &FaultProxies,
    nodes: &[String],
    dialers: &[String],
    base: &RedisOptions,
) -> Result<Cluster, ClusterError> {
    let mut supervisor = supervisor.lock().await;
    let mut attempt = 0;
    loop {
        attempt += 1;
        let (net, client_addrs, specs) =
            prepare(&supervisor, proxies, nodes, dialers, base).await?;
        match supervisor.start_cluster(specs).await {
            Ok(members) => {
                return Ok(Cluster {
                    client_addrs,
                    members,
                    net,
                })
            }
            // Another process took a port before its node bound it: new ports, new proxies
            // and routers in front of them, new configs.
            Err(e) => {
                net.delete().await;
                for node in nodes {
                    let _ = proxies.delete(node).await;
                }
                match e {
                    ProcessError::ClusterPortTaken { .. } if attempt < START_ATTEMPTS => {}
                    other => return Err(other.into()),
                }
            }
        }
    }
}

/// One attempt's ports, client proxies, routed network and node configs.
async fn prepare(
    supervisor: &Supervisor,
    proxies: &FaultProxies,
    nodes: &[String],
    dialers: &[String],
    base: &RedisOptions,
) -> Result<(ClusterNet, Vec<SocketAddr>, Vec<MemberSpec>), ClusterError> {
    let mut ports = Vec::new();
    let mut client_addrs = Vec::new();
    let mut members = Vec::new();
    for node in nodes {
        let port = reserve_port().map_err(|source| ProcessError::Port {
            node: node.clone(),
            source,
        })?;
        let direct = SocketAddr::from(([127, 0, 0, 1], port.port()));
        let client = proxies.create(node, direct).await?;
        members.push(MemberPorts {
            name: node.clone(),
            dir: supervisor.node_dir(node),
            ports: vec![(String::new(), port.port())],
            fallback: Some(client),
        });
        client_addrs.push(client);
        ports.push(port);
    }
    members.extend(dialers.iter().map(|dialer| MemberPorts {
        name: dialer.clone(),
        dir: supervisor.node_dir(dialer),
        ports: Vec::new(),
        fallback: None,
    }));
    let net = ClusterNet::create(proxies, &members, Routing::ByDialer).await?;
    let routed = |node: &str| net.peer_addr(node, "").expect("a router per node");
    let master = routed(&nodes[0]);
    let specs = nodes
        .iter()
        .zip(ports)
        .enumerate()
        .map(|(i, (node, port))| {
            let mut options = base.clone();
            let me = routed(node);
            let announce = [
                ("replica-announce-ip", me.ip().to_string()),
                ("replica-announce-port", me.port().to_string()),
            ];
            options
                .extra_config
                .extend(announce.map(|(k, v)| (k.to_owned(), v)));
            if i > 0 {
                options.extra_config.push((
                    "replicaof".to_owned(),
                    format!("{} {}", master.ip(), master.port()),
                ));
            }
            MemberSpec {
                name: node.clone(),
                kind: NodeKind::new(options),
                client: port,
                other_ports: Vec::new(),
            }
        })
        .collect();
    Ok((net, client_addrs, specs))
}
