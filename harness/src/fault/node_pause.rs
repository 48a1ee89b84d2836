//! `node-pause`: the target nodes' server processes stopped (SIGSTOP) for a while, then
//! continued (SIGCONT). On a cluster the target may be the leader.

use super::act::{nodes_value, perform};
use super::drawing::Drawing;
use super::entry::Entry;
use super::members::{self, Members};
use super::plan::Plan;
use super::step::{json, Heal, OpenFaults, StepAction, StepFuture};
use super::targets::Targets;
use super::NemesisCtx;
use super::{FaultKind, FaultSpec};
use crate::db::DbError;
use crate::server::ServerKind;
use crate::vocab::{MsRange, ScenarioError};
use lockpick_checker::history::F;
use std::sync::Arc;

pub struct NodePause;

impl FaultKind for NodePause {
    fn name(&self) -> &'static str {
        "node-pause"
    }
    fn fields(&self) -> &'static [&'static str] {
        &["duration_ms", "nodes"]
    }
    fn verbs(&self) -> super::Verbs {
        super::Verbs::nodes(F::Pause, Some(F::Resume))
    }
    fn drawing(&self) -> Drawing {
        Drawing::node_window()
    }
    fn after_run(&self) -> super::AfterRun {
        super::AfterRun::Restart(
            "a stopped member may still be catching up or voting after it is continued; a reset cannot tell that it settled",
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
        &NodePause
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
            "resume-nodes",
            |members, id| PauseNodes { members, id },
        );
    }
}

/// Stop the processes of `members` (SIGSTOP).
#[derive(Debug)]
struct PauseNodes {
    members: Members,
    id: usize,
}

impl StepAction for PauseNodes {
    fn tag(&self) -> &'static str {
        "pause-nodes"
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
            let value = nodes_value(&nodes, Some(self.members.note("SIGSTOP", &nodes)));
            open.open(self.id, Box::new(Resume(nodes.clone())));
            perform(ctx, F::Pause, value, async {
                let mut supervisor = ctx.supervisor.lock().await;
                for node in &nodes {
                    match supervisor.pause(node) {
                        Ok(()) => {}
                        // Crashed by another fault: there is no process to stop.
                        Err(DbError::NotRunning { .. }) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                Ok(())
            })
            .await
        })
    }
}

/// Lets these paused nodes go on (SIGCONT).
struct Resume(Vec<String>);

impl Heal for Resume {
    fn heal<'a>(&'a self, ctx: &'a NemesisCtx) -> StepFuture<'a> {
        Box::pin(perform(ctx, F::Resume, nodes_value(&self.0, None), async {
            let mut supervisor = ctx.supervisor.lock().await;
            for node in &self.0 {
                match supervisor.resume(node) {
                    // Not running: crashed by another fault meanwhile, nothing to resume.
                    Ok(()) | Err(DbError::NotRunning { .. }) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            Ok(())
        }))
    }
}
