//! Network faults on links (latency, partition), all healed the same way: every toxic on the
//! links' proxies removed. A fault names nodes (`nodes`: the links from clients to them, their
//! client proxies) or directed peer links (`links = ["n2-to-n1"]`: the proxy of that link in a
//! server whose members talk through lockpick's proxies, e.g. a Redis replica's replication
//! link to its master).

use super::act::{nodes_value, perform};
use super::entry::Entry;
use super::plan::Plan;
use super::step::{json, Heal, OpenFaults, StepAction, StepFuture};
use super::targets::{TargetRule, Targets};
use super::unsupported;
use super::NemesisCtx;
use super::Refusal;
use crate::server::ServerKind;
use crate::vocab::{MsRange, ScenarioError};
use lockpick_checker::history::F;

/// Removes the network faults of `nodes`; `id` is the fault it ends (not in the schedule
/// file, which names the nodes).
#[derive(Debug)]
pub(crate) struct HealLinks {
    pub nodes: Vec<String>,
    pub id: usize,
}

impl StepAction for HealLinks {
    fn tag(&self) -> &'static str {
        "heal"
    }
    fn fields(&self) -> Vec<(&'static str, serde_json::Value)> {
        vec![("nodes", json(&self.nodes))]
    }
    fn apply<'a>(&'a self, ctx: &'a NemesisCtx, open: &'a mut OpenFaults) -> StepFuture<'a> {
        Box::pin(async move {
            LinksHeal(self.nodes.clone()).heal(ctx).await?;
            // Left open on failure: the nemesis tries again at the end of the run.
            open.close(self.id);
            Ok(())
        })
    }
}

/// The heal of a network fault on the links of these nodes.
pub(crate) struct LinksHeal(pub Vec<String>);

impl Heal for LinksHeal {
    fn heal<'a>(&'a self, ctx: &'a NemesisCtx) -> StepFuture<'a> {
        Box::pin(perform(ctx, F::Heal, nodes_value(&self.0, None), async {
            for node in &self.0 {
                ctx.proxies.heal(node).await?;
            }
            Ok(())
        }))
    }
}

/// What network faults allow in `nodes`: any node or all, never the leader.
pub(crate) const TARGETS: TargetRule = TargetRule {
    members: false,
    all: true,
};

/// Which links a network fault acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reach {
    /// The links from clients to these nodes (`nodes`): their client proxies.
    Clients(Targets),
    /// These directed peer links (`links`), by proxy name: `n2-to-n1`, `n1-to-n2-quorum`,
    /// `s1-to-n1` (from a sentinel).
    Peers(Vec<String>),
}

impl Reach {
    /// What a fault on these links leaves for the next run: the kind's answer for client
    /// links (only proxies were touched, and the reset heals them); members to settle for peer
    /// links.
    pub(crate) fn after_run(&self, kind: super::AfterRun) -> super::AfterRun {
        match self {
            Reach::Clients(_) => kind,
            Reach::Peers(_) => super::AfterRun::Settle(
                "members whose peer links were cut or slowed may still be catching up or voting",
            ),
        }
    }

    /// `nodes` or `links` of a network fault entry (neither: every node's client links).
    pub(crate) fn read(e: &Entry<'_>) -> Result<Reach, ScenarioError> {
        let Some(links) = e.get::<Vec<String>>("links")? else {
            return Ok(Reach::Clients(e.targets(TARGETS)?));
        };
        if e.span("nodes").is_some() {
            return Err(e.at(
                "links",
                "a fault names nodes (their client links) or links, not both",
            ));
        }
        if links.is_empty() {
            return Err(e.at(
                "links",
                "empty link list; name at least one, e.g. \"n2-to-n1\"",
            ));
        }
        for (i, link) in links.iter().enumerate() {
            if links[..i].contains(link) {
                return Err(e.at("links", format!("link {link:?} is listed twice")));
            }
            if !is_peer_link(link, e.node_names, e.server.dialers()) {
                let dialers = match e.server.dialers() {
                    [] => String::new(),
                    some => format!(", or from one of {} to a node", some.join(", ")),
                };
                return Err(e.at(
                    "links",
                    format!(
                        "unknown link {link:?}; allowed: \"<from>-to-<to>\" (with a port label \
                         \"-<label>\" where the server has several) between two nodes of {}{dialers}",
                        e.node_names.join(", ")
                    ),
                ));
            }
        }
        Ok(Reach::Peers(links))
    }

    /// Why `server` cannot take the network fault `name` on these links, if it cannot.
    pub(crate) fn cannot_run_on(&self, name: &str, server: &dyn ServerKind) -> Option<Refusal> {
        match self {
            Reach::Clients(_) => None,
            Reach::Peers(_) => unsupported(
                name,
                server,
                "it acts on peer links",
                server.capabilities().peers,
            ),
        }
    }

    /// Why this fault needs servers lockpick starts, if it does.
    pub(crate) fn needs_own_nodes(&self) -> Option<&'static str> {
        match self {
            Reach::Clients(_) => None,
            Reach::Peers(_) => Some(
                "it acts on peer links, which run through lockpick's proxies only in a server lockpick started",
            ),
        }
    }
}

/// Whether `link` reads `<from>-to-<to>` or `<from>-to-<to>-<label>` for two different nodes,
/// or from one of `dialers` to a node.
fn is_peer_link(link: &str, nodes: &[String], dialers: &[&str]) -> bool {
    let Some((from, rest)) = link.split_once("-to-") else {
        return false;
    };
    let to = rest.split_once('-').map_or(rest, |(to, _label)| to);
    let node = |n: &str| nodes.iter().any(|k| k == n);
    from != to && node(to) && (node(from) || dialers.contains(&from))
}

/// One network fault on `reach` for `duration`: the step `open` makes from the proxy names
/// and the fault's id, then the heal of those proxies.
pub(crate) fn window<S: StepAction + 'static>(
    plan: &mut Plan<'_>,
    at: u64,
    reach: &Reach,
    duration: MsRange,
    open: impl FnOnce(Vec<String>, usize) -> S,
) {
    let id = plan.id();
    let nodes = match reach {
        Reach::Clients(targets) => plan.nodes(targets),
        Reach::Peers(links) => links.clone(),
    };
    let ms = plan.draw(duration);
    plan.window(at, ms, open(nodes.clone(), id), HealLinks { nodes, id });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_link_names_two_different_nodes_and_maybe_a_port_label() {
        let nodes = ["n1".to_owned(), "n2".to_owned()];
        assert!(is_peer_link("n2-to-n1", &nodes, &[]));
        assert!(is_peer_link("n1-to-n2-quorum", &nodes, &[]));
        assert!(!is_peer_link("n1-to-n1", &nodes, &[]));
        assert!(!is_peer_link("n3-to-n1", &nodes, &[]));
        assert!(!is_peer_link("s1-to-n1", &nodes, &[]));
        assert!(is_peer_link("s1-to-n1", &nodes, &["s1"]));
        assert!(!is_peer_link("n1-to-s1", &nodes, &["s1"]));
        assert!(!is_peer_link("n2", &nodes, &[]));
    }
}
