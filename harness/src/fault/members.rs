//! Faults on cluster members and server processes (isolate, node-pause, node-crash): the
//! members they name, the leader looked up when they start, and the step that ends them.

use super::entry::Entry;
use super::plan::Plan;
use super::step::{json, OpenFaults, StepAction, StepFuture};
use super::targets::{TargetRule, Targets};
use super::unsupported;
use super::NemesisCtx;
use super::Refusal;
use crate::server::ServerKind;
use crate::vocab::{MsRange, ScenarioError};
use serde::Serialize;
use std::time::{Duration, Instant};

/// How long to look for a leader before a leader fault is skipped (an election is running).
const LEADER_SEARCH: Duration = Duration::from_secs(3);

/// The nodes a process or peer fault applies to: named in the schedule, or the cluster's
/// leader, found when the fault starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Members {
    Named(Vec<String>),
    Leader,
}

impl Members {
    /// The members named now: the leader is looked up (a paused or dead member is never it);
    /// `None` when no leader emerged in time.
    pub(crate) async fn resolve(&self, ctx: &NemesisCtx) -> Option<Vec<String>> {
        match self {
            Members::Named(names) => Some(names.clone()),
            Members::Leader => {
                let names = ctx.cluster.as_ref()?.members().to_vec();
                let deadline = Instant::now() + LEADER_SEARCH;
                loop {
                    if let Some(leader) = ctx.supervisor.lock().await.leader(&names).await {
                        return Some(vec![leader]);
                    }
                    if Instant::now() >= deadline {
                        return None;
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }

    /// The history note of a fault on `nodes`: `what`, then who (`the leader` if it was).
    pub(crate) fn note(&self, what: &str, nodes: &[String]) -> String {
        let who = if *self == Members::Leader {
            "the leader "
        } else {
            ""
        };
        format!("{what} {who}{}", nodes.join(","))
    }
}

/// Ends the member fault `id` (its heal), if it started: `tag` names the step in the schedule.
#[derive(Debug)]
pub(crate) struct EndMemberFault {
    pub tag: &'static str,
    pub id: usize,
}

impl StepAction for EndMemberFault {
    fn tag(&self) -> &'static str {
        self.tag
    }
    fn fields(&self) -> Vec<(&'static str, serde_json::Value)> {
        vec![("id", json(self.id))]
    }
    fn closes(&self) -> Option<usize> {
        Some(self.id)
    }
    fn apply<'a>(&'a self, ctx: &'a NemesisCtx, open: &'a mut OpenFaults) -> StepFuture<'a> {
        Box::pin(async move {
            match open.close(self.id) {
                Some(heal) => heal.heal(ctx).await,
                None => Ok(()),
            }
        })
    }
}

/// What faults on server processes (node-pause, node-crash) allow in `nodes`: any node or all,
/// and on a cluster the leader, hitting one random member unless told.
pub(crate) fn process_targets(e: &Entry<'_>) -> Result<Targets, ScenarioError> {
    e.targets(TargetRule {
        members: e.server.capabilities().peers.is_ok(),
        all: true,
    })
}

/// Why `server` cannot take the process fault `name` on `targets`, if it cannot.
pub(crate) fn cannot_signal(
    name: &str,
    targets: &Targets,
    server: &dyn ServerKind,
) -> Option<Refusal> {
    let caps = server.capabilities();
    match targets {
        Targets::Leader => unsupported(name, server, "it acts on the cluster's leader", caps.peers),
        Targets::All | Targets::RandomOne | Targets::Nodes(_) => {
            unsupported(name, server, "it signals server processes", caps.signals)
        }
    }
}

/// Why process faults cannot run on servers lockpick did not start.
pub(crate) const SIGNALS_NEED_OWN_NODES: &str =
    "it signals server processes, which lockpick did not start";

/// One member fault on `targets` for `duration`: the step `open` makes from the members and
/// the fault's id, then the step named `end_tag` that heals it.
pub(crate) fn window<S: StepAction + 'static>(
    plan: &mut Plan<'_>,
    at: u64,
    targets: &Targets,
    duration: MsRange,
    end_tag: &'static str,
    open: impl FnOnce(Members, usize) -> S,
) {
    let id = plan.id();
    // The members `targets` names; the leader is looked up when the fault starts.
    let members = match targets {
        Targets::Leader => Members::Leader,
        Targets::All | Targets::RandomOne | Targets::Nodes(_) => {
            Members::Named(plan.nodes(targets))
        }
    };
    let ms = plan.draw(duration);
    let end = EndMemberFault { tag: end_tag, id };
    plan.window(at, ms, open(members, id), end);
}
