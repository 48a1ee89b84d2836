//! `node-crash`: the target nodes' server processes killed (SIGKILL) and started again after a
//! while (0: at once; at least the max TTL: antirez's delayed restart), with whatever their
//! persistence kept. On a cluster the target may be the leader.

use super::act::{nodes_value, perform};
use super::drawing::Drawing;
use super::entry::Entry;
use super::member_fault::{MemberFault, Start};
use super::members;
use super::step::{Heal, StepFuture};
use super::NemesisCtx;
use super::{FaultKind, FaultSpec};
use crate::vocab::ScenarioError;
use lockpick_checker::exposure::Rule;
use lockpick_checker::history::F;
use std::sync::Arc;

pub struct NodeCrash;

impl FaultKind for NodeCrash {
    fn name(&self) -> &'static str {
        "node-crash"
    }
    fn fields(&self) -> &'static [&'static str] {
        &["duration_ms", "nodes"]
    }
    fn verbs(&self) -> super::Verbs {
        super::Verbs::nodes(F::Crash, Some(F::Restart))
    }
    /// Its exposure rule ([`Rule::RestartInsideLease`]): a node that forgot the key can grant it again only once it is back, and only while the holder still believes.
    fn exposure(&self) -> Rule {
        Rule::RestartInsideLease
    }
    fn drawing(&self) -> Drawing {
        Drawing::node_window()
    }
    fn example(&self) -> super::Example {
        super::Example {
            backend: "redlock",
            body: "nodes = [\"n3\"]\nduration_ms = [0, 300]",
        }
    }
    fn after_run(&self) -> super::AfterRun {
        // What a killed node held only in memory is gone; the reset clears it on every node
        // anyway, so what is left to wait for is the restarted member catching up.
        super::AfterRun::Settle("a killed and restarted member may still be catching up or voting")
    }
    fn parse(&self, e: &Entry<'_>) -> Result<Arc<dyn FaultSpec>, ScenarioError> {
        CRASH.parse(e)
    }
}

/// Everything else about it is every member fault's ([`MemberFault`]).
static CRASH: MemberFault = MemberFault {
    kind: &NodeCrash,
    open_tag: "crash-nodes",
    heal_tag: "restart-nodes",
    targets: members::process_targets,
    cannot_run_on: members::cannot_signal,
    needs_own_nodes: members::SIGNALS_NEED_OWN_NODES,
    start: kill,
};

/// Kills the nodes' processes (SIGKILL), then turns off the proxies in front of them: while a
/// node is down, connecting to it is refused, as by its host (see
/// [`crate::proxy::FaultProxies::set_enabled_towards`]).
fn kill(s: Start<'_>) -> StepFuture<'_> {
    Box::pin(async move {
        let value = nodes_value(&s.nodes, Some(s.members.note("SIGKILL", &s.nodes)));
        s.open.open(s.id, Box::new(Restart(s.nodes.clone())));
        perform(s.ctx, F::Crash, value, async {
            {
                let mut supervisor = s.ctx.supervisor.lock().await;
                for node in &s.nodes {
                    supervisor.kill(node).await?;
                }
            }
            let (client, peer) = ports_of(s.ctx, &s.nodes).await;
            let ports = [client, peer].concat();
            s.ctx.proxies.set_enabled_towards(&ports, false).await?;
            Ok(())
        })
        .await
    })
}

/// The nodes' client ports and their other (peer) ports.
async fn ports_of(ctx: &NemesisCtx, nodes: &[String]) -> (Vec<u16>, Vec<u16>) {
    let supervisor = ctx.supervisor.lock().await;
    let (mut client, mut peer) = (Vec::new(), Vec::new());
    for node in nodes {
        if let Some((first, rest)) = supervisor
            .ports(node)
            .as_deref()
            .and_then(<[u16]>::split_first)
        {
            client.push(*first);
            peer.extend_from_slice(rest);
        }
    }
    (client, peer)
}

/// Starts these crashed nodes again.
struct Restart(Vec<String>);

impl Heal for Restart {
    fn heal<'a>(&'a self, ctx: &'a NemesisCtx) -> StepFuture<'a> {
        // The completion comes once the nodes answer again, so the window covers the whole
        // restart.
        Box::pin(perform(
            ctx,
            F::Restart,
            nodes_value(&self.0, None),
            async {
                // The other members can reach a restarting member as it starts (it may need
                // them to rejoin); clients only once it is ready.
                let (client, peer) = ports_of(ctx, &self.0).await;
                ctx.proxies.set_enabled_towards(&peer, true).await?;
                ctx.supervisor.lock().await.restart_all(&self.0).await?;
                ctx.proxies.set_enabled_towards(&client, true).await?;
                Ok(())
            },
        ))
    }
}
