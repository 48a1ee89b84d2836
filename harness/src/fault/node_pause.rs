//! `node-pause`: the target nodes' server processes stopped (SIGSTOP) for a while, then
//! continued (SIGCONT). On a cluster the target may be the leader.

use super::act::{nodes_value, perform};
use super::drawing::Drawing;
use super::entry::Entry;
use super::member_fault::{MemberFault, Start};
use super::members;
use super::step::{Heal, StepFuture};
use super::NemesisCtx;
use super::{FaultKind, FaultSpec};
use crate::processes::ProcessError;
use crate::vocab::ScenarioError;
use lockpick_checker::exposure::Rule;
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
    /// Its exposure rule ([`Rule::CutPastLease`]): a stopped node answers nobody, as a cut of its client links does.
    fn exposure(&self) -> Rule {
        Rule::CutPastLease
    }
    fn drawing(&self) -> Drawing {
        Drawing::node_window()
    }
    fn example(&self) -> super::Example {
        super::Example {
            backend: "redlock",
            body: "nodes = [\"n1\", \"n2\"]\nduration_ms = 300",
        }
    }
    fn after_run(&self) -> super::AfterRun {
        super::AfterRun::Settle(
            "a stopped member may still be catching up or voting after it is continued",
        )
    }
    fn parse(&self, e: &Entry<'_>) -> Result<Arc<dyn FaultSpec>, ScenarioError> {
        PAUSE.parse(e)
    }
}

/// Everything else about it is every member fault's ([`MemberFault`]).
static PAUSE: MemberFault = MemberFault {
    kind: &NodePause,
    open_tag: "pause-nodes",
    heal_tag: "resume-nodes",
    targets: members::process_targets,
    cannot_run_on: members::cannot_signal,
    needs_own_nodes: members::SIGNALS_NEED_OWN_NODES,
    start: stop,
};

/// Stops the nodes' processes (SIGSTOP).
fn stop(s: Start<'_>) -> StepFuture<'_> {
    Box::pin(async move {
        let value = nodes_value(&s.nodes, Some(s.members.note("SIGSTOP", &s.nodes)));
        s.open.open(s.id, Box::new(Resume(s.nodes.clone())));
        perform(s.ctx, F::Pause, value, async {
            let mut supervisor = s.ctx.supervisor.lock().await;
            for node in &s.nodes {
                match supervisor.pause(node) {
                    Ok(()) => {}
                    // Crashed by another fault: there is no process to stop.
                    Err(ProcessError::NotRunning { .. }) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            Ok(())
        })
        .await
    })
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
                    Ok(()) | Err(ProcessError::NotRunning { .. }) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            Ok(())
        }))
    }
}
