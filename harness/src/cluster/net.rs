//! The peer network of one cluster: a proxy per directed link and port (`n1-to-n2`,
//! `n1-to-n2-election`), created before the members start so their configs can name them, and
//! the partitions made by cutting those proxies.
//!
//! How a member's traffic reaches the proxy of its link depends on the system. ZooKeeper lets
//! each server's config name the others at any address, so server n1's config names
//! `n1-to-n2` for n2 ([`Routing::PerLink`]). etcd needs one peer address per member, the same
//! for all (it derives member ids from it), so a router in front of each member's peer port
//! tells the dialing members apart and passes each connection to its link's proxy
//! ([`Routing::ByDialer`]). The router identifies the dialer from /proc while the connection
//! is open, which fails for a connection its dialer closes at once: fine for etcd's HTTP, not
//! for ZooKeeper's election handshake, where the lower id sends its id and hangs up.

use super::error::ClusterError;
use super::router::PeerRouter;
use crate::proxy::{FaultProxies, ProxyError};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;

/// What the network needs to know of one member before it starts.
#[derive(Debug, Clone)]
pub struct MemberPorts {
    pub name: String,
    /// The member's working directory (`Supervisor::node_dir`): how its connections are told
    /// apart from the other members'.
    pub dir: PathBuf,
    /// Each peer port the member listens on, with a label naming it (`""` for the only one,
    /// `"election"` …), in the same order for every member that listens; none for a member
    /// that only dials (a Redis sentinel, which is reached directly).
    pub ports: Vec<(String, u16)>,
    /// Where a dialer that is no member reaches this member's routers ([`Routing::ByDialer`]):
    /// its client proxy, when clients dial the same address as members do (Redis replicas
    /// announce one address to sentinels and clients alike). `None`: such dialers are refused.
    pub fallback: Option<SocketAddr>,
}

/// How members reach the proxies of their links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Routing {
    /// Each member's config names the proxy of each of its links: see [`ClusterNet::link_addr`].
    PerLink,
    /// Members dial one router per peer port: see [`ClusterNet::peer_addr`].
    ByDialer,
}

/// The routers and link proxies of one cluster. Routers stop when it is dropped; proxies
/// stay until [`ClusterNet::delete`].
pub struct ClusterNet {
    members: Vec<String>,
    proxies: FaultProxies,
    /// By (member, label): where the other members dial it ([`Routing::ByDialer`]).
    routers: BTreeMap<(String, String), PeerRouter>,
    /// By (from, to, label): the listen address of the link's proxy.
    links: BTreeMap<(String, String, String), SocketAddr>,
}

/// The proxy name of the link `from` → `to` on the peer port labelled `label`.
pub fn link_proxy(from: &str, to: &str, label: &str) -> String {
    if label.is_empty() {
        format!("{from}-to-{to}")
    } else {
        format!("{from}-to-{to}-{label}")
    }
}

impl ClusterNet {
    /// Creates, for every member and peer port, the proxies of the links from each other
    /// member and the router in front of them.
    pub async fn create(
        proxies: &FaultProxies,
        members: &[MemberPorts],
        routing: Routing,
    ) -> Result<ClusterNet, ClusterError> {
        let mut routers = BTreeMap::new();
        let mut links = BTreeMap::new();
        for to in members {
            for (label, port) in &to.ports {
                let upstream = SocketAddr::from(([127, 0, 0, 1], *port));
                let mut routes = BTreeMap::new();
                for from in members.iter().filter(|m| m.name != to.name) {
                    let name = link_proxy(&from.name, &to.name, label);
                    let addr = proxies.create(&name, upstream).await?;
                    routes.insert(from.dir.clone(), addr);
                    links.insert((from.name.clone(), to.name.clone(), label.clone()), addr);
                }
                if routing == Routing::PerLink {
                    continue;
                }
                let router = PeerRouter::start(routes, to.fallback)
                    .await
                    .map_err(|source| ClusterError::Router {
                        member: to.name.clone(),
                        source,
                    })?;
                routers.insert((to.name.clone(), label.clone()), router);
            }
        }
        Ok(ClusterNet {
            members: members.iter().map(|m| m.name.clone()).collect(),
            proxies: proxies.clone(),
            routers,
            links,
        })
    }

    /// The member names, in order.
    pub fn members(&self) -> &[String] {
        &self.members
    }

    /// Where the other members reach `member` on its peer port `label` ([`Routing::ByDialer`]).
    pub fn peer_addr(&self, member: &str, label: &str) -> Option<SocketAddr> {
        self.routers
            .get(&(member.to_string(), label.to_string()))
            .map(PeerRouter::addr)
    }

    /// Where `from` reaches `to` on its peer port `label`: the link's proxy.
    pub fn link_addr(&self, from: &str, to: &str, label: &str) -> Option<SocketAddr> {
        self.links
            .get(&(from.to_string(), to.to_string(), label.to_string()))
            .copied()
    }

    /// The proxies of every link between `group` and the other members, both directions (a
    /// member that only dials has links towards the others only).
    fn links_across(&self, group: &[String]) -> Vec<String> {
        self.links
            .keys()
            .filter(|(from, to, _)| group.contains(from) != group.contains(to))
            .map(|(from, to, label)| link_proxy(from, to, label))
            .collect()
    }

    /// Whether `name` is the proxy of one of this network's links.
    pub fn has_link(&self, name: &str) -> bool {
        self.links
            .keys()
            .any(|(from, to, label)| link_proxy(from, to, label) == name)
    }

    /// Cuts every peer link between `group` and the rest (clients still reach every member).
    pub async fn isolate(&self, group: &[String]) -> Result<(), ProxyError> {
        for name in self.links_across(group) {
            self.proxies.partition(&name).await?;
        }
        Ok(())
    }

    /// Restores the peer links cut by [`ClusterNet::isolate`] of `group`.
    pub async fn heal(&self, group: &[String]) -> Result<(), ProxyError> {
        for name in self.links_across(group) {
            self.proxies.heal(&name).await?;
        }
        Ok(())
    }

    /// Removes every link proxy (for an external Toxiproxy, which outlives the run).
    pub async fn delete(&self) {
        for (from, to, label) in self.links.keys() {
            let _ = self.proxies.delete(&link_proxy(from, to, label)).await;
        }
    }
}

#[cfg(test)]
impl ClusterNet {
    /// A cluster of `members` with no peer link proxies: isolating or healing a group acts on
    /// nothing. For tests of what the nemesis records, which need a cluster but no servers.
    pub(crate) fn without_links(members: &[&str], proxies: &FaultProxies) -> ClusterNet {
        ClusterNet {
            members: members.iter().map(|m| m.to_string()).collect(),
            proxies: proxies.clone(),
            routers: BTreeMap::new(),
            links: BTreeMap::new(),
        }
    }
}
