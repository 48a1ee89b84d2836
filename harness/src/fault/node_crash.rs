//! `node-crash`: the target nodes' server processes killed (SIGKILL) and started again after a
//! while (0: at once; at least the max TTL: antirez's delayed restart), with whatever their
//! persistence kept. On a cluster the target may be the leader.

use super::act::{nodes_value, perform};
use super::drawing::Drawing;
use super::entry::Entry;
use super::members::{self, Members};
use super::plan::Plan;
use super::step::{json, Heal, OpenFaults, StepAction, StepFuture};
use super::targets::Targets;
use super::NemesisCtx;
use super::{FaultKind, FaultSpec};
use crate::server::ServerKind;
use crate::vocab::{MsRange, ScenarioError};
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
    fn drawing(&self) -> Drawing {
        Drawing::node_window()
    }
    fn after_run(&self) -> super::AfterRun {
        super::AfterRun::Restart(
            "a killed node lost what it held in memory (and a restarted member may still be catching up): a fresh start is what the next run needs",
        )
    }
    fn parse(&self, e: &Entry<'_>) -> Result<Arc<dyn FaultSpec>, ScenarioError> {
        Ok(Arc::new(Spec {
            targets: members::process_targets(e)?,
            duration: e.duration()?,
        }))
    }
}

#[derive(Debug)]
struct Spec {
    targets: Targets,
    duration: MsRange,
}

impl FaultSpec for Spec {
    fn kind(&self) -> &'static dyn FaultKind {
        &NodeCrash
    }
    fn label(&self) -> String {
        self.name().to_owned()
    }
    fn cannot_run_on(&self, server: &dyn ServerKind) -> Option<String> {
        members::cannot_signal(self.name(), &self.targets, server)
    }
    fn needs_own_nodes(&self) -> Option<&'static str> {
        Some(members::SIGNALS_NEED_OWN_NODES)
    }
    fn moves_clocks(&self) -> bool {
        false
    }
    fn steps_per_start(&self, _: u64) -> u64 {
        2
    }
    fn schedule(&self, plan: &mut Plan<'_>, at: u64) {
        members::window(
            plan,
            at,
            &self.targets,
            self.duration,
            "restart-nodes",
            |members, id| CrashNodes { members, id },
        );
    }
}

/// Kill the processes of `members` (SIGKILL).
#[derive(Debug)]
struct CrashNodes {
    members: Members,
    id: usize,
}

impl StepAction for CrashNodes {
    fn tag(&self) -> &'static str {
        "crash-nodes"
    }
    fn fields(&self) -> Vec<(&'static str, serde_json::Value)> {
        vec![("members", json(&self.members)), ("id", json(self.id))]
    }
    fn opens(&self) -> Option<usize> {
        Some(self.id)
    }
    fn apply<'a>(&'a self, ctx: &'a NemesisCtx, open: &'a mut OpenFaults) -> StepFuture<'a> {
        Box::pin(async move {
            // No leader emerged: the fault did not take effect, so nothing is recorded.
            let Some(nodes) = self.members.resolve(ctx).await else {
                return Ok(());
            };
            let value = nodes_value(&nodes, Some(self.members.note("SIGKILL", &nodes)));
            open.open(self.id, Box::new(Restart(nodes.clone())));
            perform(ctx, F::Crash, value, async {
                let mut supervisor = ctx.supervisor.lock().await;
                for node in &nodes {
                    supervisor.kill(node).await?;
                }
                Ok(())
            })
            .await
        })
    }
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
                let mut supervisor = ctx.supervisor.lock().await;
                supervisor.restart_all(&self.0).await?;
                Ok(())
            },
        ))
    }
}
