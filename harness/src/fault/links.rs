//! Network faults on the links from clients to nodes (latency, partition), all healed the same
//! way: every toxic on the nodes' proxies removed.

use super::act::{nodes_value, perform};
use super::plan::Plan;
use super::step::{json, Heal, OpenFaults, StepAction, StepFuture};
use super::targets::{TargetRule, Targets};
use crate::nemesis::NemesisCtx;
use crate::scenario::MsRange;
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

/// One network fault on `targets` for `duration`: the step `open` makes from the nodes and
/// the fault's id, then the heal of those nodes' links.
pub(crate) fn window<S: StepAction + 'static>(
    plan: &mut Plan<'_>,
    at: u64,
    targets: &Targets,
    duration: MsRange,
    open: impl FnOnce(Vec<String>, usize) -> S,
) {
    let id = plan.id();
    let nodes = plan.nodes(targets);
    let ms = plan.draw(duration);
    plan.window(at, ms, open(nodes.clone(), id), HealLinks { nodes, id });
}
