//! What starting any cluster behind lockpick's proxies shares: a client port and the peer
//! ports reserved per member, the peer network built in front of them, the members started
//! together, then a client proxy per member.

use super::error::ClusterError;
use super::net::{ClusterNet, MemberPorts, Routing};
use crate::processes::{reserve_port, MemberSpec, NodeInfo, NodeKind, ProcessError, Supervisor};
use crate::proxy::FaultProxies;
use std::net::SocketAddr;
use tokio::sync::Mutex;

/// A running cluster.
pub struct Cluster {
    /// The member client proxies (named after the members), in member order.
    pub client_addrs: Vec<SocketAddr>,
    /// The members as started (their `addr` is the direct client address, past the proxy).
    pub members: Vec<NodeInfo>,
    pub net: ClusterNet,
}

/// One member, as its kind's config sees it before it starts.
pub(crate) struct Member<'a> {
    /// Its place in `names`, from 0.
    pub(crate) index: usize,
    pub(crate) name: &'a str,
    /// Its peer ports, in the order of the labels.
    pub(crate) peer_ports: Vec<u16>,
}

/// How many times a cluster start is tried with new ports after one was taken.
const START_ATTEMPTS: usize = 5;

/// Starts members named `names` under `supervisor`, each with a client port and one peer port
/// per label in `labels`, their peer links through `proxies` routed as `routing` says, and
/// one client proxy per member (`n1` …). `kind` makes each member's config once the peer
/// network exists, since the configs name its addresses. Returns once the members are up, as
/// [`Supervisor::start_cluster`] sees it. Precondition: no node or proxy of these names
/// exists yet.
pub(crate) async fn start_members(
    supervisor: &Mutex<Supervisor>,
    proxies: &FaultProxies,
    names: &[String],
    labels: &[&str],
    routing: Routing,
    mut kind: impl FnMut(&ClusterNet, &Member<'_>) -> NodeKind,
) -> Result<Cluster, ClusterError> {
    let mut supervisor = supervisor.lock().await;
    let mut attempt = 0;
    let (started, net) = loop {
        attempt += 1;
        let (net, specs) =
            prepare_members(&supervisor, proxies, names, labels, routing, &mut kind).await?;
        match supervisor.start_cluster(specs).await {
            Ok(started) => break (started, net),
            // Another process took a port before its member bound it: new ports, new peer
            // proxies in front of them, new configs.
            Err(ProcessError::ClusterPortTaken { .. }) if attempt < START_ATTEMPTS => {
                net.delete().await;
            }
            Err(e) => {
                net.delete().await;
                return Err(e.into());
            }
        }
    };
    drop(supervisor);
    let mut client_addrs = Vec::new();
    for info in &started {
        client_addrs.push(proxies.create(&info.name, info.addr).await?);
    }
    Ok(Cluster {
        client_addrs,
        members: started,
        net,
    })
}

/// Reserves every member's ports, builds the peer network in front of them and each
/// member's config: one attempt's worth of [`MemberSpec`]s.
async fn prepare_members(
    supervisor: &Supervisor,
    proxies: &FaultProxies,
    names: &[String],
    labels: &[&str],
    routing: Routing,
    kind: &mut impl FnMut(&ClusterNet, &Member<'_>) -> NodeKind,
) -> Result<(ClusterNet, Vec<MemberSpec>), ClusterError> {
    let reserve = |name: &str| {
        reserve_port().map_err(|source| ProcessError::Port {
            node: name.to_owned(),
            source,
        })
    };
    let mut reserved = Vec::new();
    let mut members = Vec::new();
    for name in names {
        let client = reserve(name)?;
        let peers = labels
            .iter()
            .map(|_| reserve(name))
            .collect::<Result<Vec<_>, _>>()?;
        members.push(MemberPorts {
            name: name.clone(),
            dir: supervisor.node_dir(name),
            ports: labels
                .iter()
                .zip(&peers)
                .map(|(label, peer)| ((*label).to_owned(), peer.port()))
                .collect(),
            fallback: None,
        });
        reserved.push((name.clone(), client, peers));
    }
    let net = ClusterNet::create(proxies, &members, routing).await?;
    let specs = reserved
        .into_iter()
        .enumerate()
        .map(|(index, (name, client, peers))| {
            let member = Member {
                index,
                name: &name,
                peer_ports: peers.iter().map(|p| p.port()).collect(),
            };
            MemberSpec {
                kind: kind(&net, &member),
                name,
                client,
                other_ports: peers,
            }
        })
        .collect();
    Ok((net, specs))
}
