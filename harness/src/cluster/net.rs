//! The peer network of one cluster: a router per member peer port and a proxy per directed
//! link and port (`n1-to-n2`, `n1-to-n2-election`), created before the members start so their
//! configs can name the routers; and the partitions made by cutting those proxies.

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
    /// `"election"` …), in the same order for every member.
    pub ports: Vec<(String, u16)>,
}

/// The routers and link proxies of one cluster. Routers stop when it is dropped; proxies
/// stay until [`ClusterNet::delete`].
pub struct ClusterNet {
    members: Vec<String>,
    labels: Vec<String>,
    proxies: FaultProxies,
    /// By (member, label): where the other members dial it.
    routers: BTreeMap<(String, String), PeerRouter>,
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
    /// member and the router in front of them. Precondition: all members list the same labels.
    pub async fn create(
        proxies: &FaultProxies,
        members: &[MemberPorts],
    ) -> Result<ClusterNet, ClusterError> {
        let labels: Vec<String> = members
            .first()
            .map(|m| m.ports.iter().map(|(l, _)| l.clone()).collect())
            .unwrap_or_default();
        let mut routers = BTreeMap::new();
        for to in members {
            for (label, port) in &to.ports {
                let upstream = SocketAddr::from(([127, 0, 0, 1], *port));
                let mut routes = BTreeMap::new();
                for from in members.iter().filter(|m| m.name != to.name) {
                    let name = link_proxy(&from.name, &to.name, label);
                    routes.insert(from.dir.clone(), proxies.create(&name, upstream).await?);
                }
                let router =
                    PeerRouter::start(routes)
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
            labels,
            proxies: proxies.clone(),
            routers,
        })
    }

    /// The member names, in order.
    pub fn members(&self) -> &[String] {
        &self.members
    }

    /// Where the other members reach `member` on its peer port `label`.
    pub fn peer_addr(&self, member: &str, label: &str) -> Option<SocketAddr> {
        self.routers
            .get(&(member.to_string(), label.to_string()))
            .map(PeerRouter::addr)
    }

    /// The proxies of every link between `group` and the other members, both directions.
    fn links_across(&self, group: &[String]) -> Vec<String> {
        let mut names = Vec::new();
        for inside in group {
            for outside in self.members.iter().filter(|m| !group.contains(m)) {
                for label in &self.labels {
                    names.push(link_proxy(inside, outside, label));
                    names.push(link_proxy(outside, inside, label));
                }
            }
        }
        names
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
        for to in &self.members {
            for from in self.members.iter().filter(|m| *m != to) {
                for label in &self.labels {
                    let _ = self.proxies.delete(&link_proxy(from, to, label)).await;
                }
            }
        }
    }
}
