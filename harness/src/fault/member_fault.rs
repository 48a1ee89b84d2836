//! A fault on cluster members or server processes for a while (isolate, node-pause,
//! node-crash), written once: each of those modules declares a [`MemberFault`] (its names,
//! targets, what a server needs for it, and how it starts and heals), and the spec, the
//! schedule and the starting step here are the same for all of them.

use super::entry::Entry;
use super::members::{self, Members};
use super::plan::Plan;
use super::step::{json, OpenFaults, StepAction, StepFuture};
use super::targets::Targets;
use super::NemesisCtx;
use super::Refusal;
use super::{FaultKind, FaultSpec};
use crate::server::ServerKind;
use crate::vocab::{MsRange, ScenarioError};
use std::fmt;
use std::sync::Arc;

/// What a member fault's module declares.
pub(crate) struct MemberFault {
    pub kind: &'static dyn FaultKind,
    /// The schedule's names of the step that starts it and of the one that heals it.
    pub open_tag: &'static str,
    pub heal_tag: &'static str,
    /// The members a scenario may name for it.
    pub targets: fn(&Entry<'_>) -> Result<Targets, ScenarioError>,
    /// Why `server` cannot take it (named `name`) on `targets`, if it cannot.
    pub cannot_run_on: fn(name: &str, &Targets, server: &dyn ServerKind) -> Option<Refusal>,
    /// Why it cannot run on servers lockpick did not start.
    pub needs_own_nodes: &'static str,
    /// Starts it on the members as they are now: records its verb with its note and opens
    /// its heal under the fault's id.
    pub start: for<'a> fn(Start<'a>) -> StepFuture<'a>,
}

/// What [`MemberFault::start`] gets.
pub(crate) struct Start<'a> {
    pub ctx: &'a NemesisCtx,
    /// As the schedule names them (the leader, or nodes).
    pub members: &'a Members,
    /// The nodes they are now.
    pub nodes: Vec<String>,
    pub id: usize,
    pub open: &'a mut OpenFaults,
}

impl fmt::Debug for MemberFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind.name())
    }
}

impl MemberFault {
    /// The fault as a `[[nemesis]]` entry configures it: its targets and `duration_ms`.
    pub fn parse(&'static self, e: &Entry<'_>) -> Result<Arc<dyn FaultSpec>, ScenarioError> {
        Ok(Arc::new(Spec {
            fault: self,
            targets: (self.targets)(e)?,
            duration: e.duration()?,
        }))
    }
}

#[derive(Debug)]
struct Spec {
    fault: &'static MemberFault,
    targets: Targets,
    duration: MsRange,
}

impl FaultSpec for Spec {
    fn kind(&self) -> &'static dyn FaultKind {
        self.fault.kind
    }
    fn label(&self) -> String {
        self.name().to_owned()
    }
    fn cannot_run_on(&self, server: &dyn ServerKind) -> Option<Refusal> {
        (self.fault.cannot_run_on)(self.name(), &self.targets, server)
    }
    fn needs_own_nodes(&self) -> Option<&'static str> {
        Some(self.fault.needs_own_nodes)
    }
    fn moves_clocks(&self) -> bool {
        false
    }
    fn steps_per_start(&self, _: u64) -> u64 {
        2
    }
    fn schedule(&self, plan: &mut Plan<'_>, at: u64) {
        let fault = self.fault;
        members::window(
            plan,
            at,
            &self.targets,
            self.duration,
            fault.heal_tag,
            |members, id| StartMembers { fault, members, id },
        );
    }
}

/// The step that starts a member fault on `members`.
#[derive(Debug)]
struct StartMembers {
    fault: &'static MemberFault,
    members: Members,
    id: usize,
}

impl StepAction for StartMembers {
    fn tag(&self) -> &'static str {
        self.fault.open_tag
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
            (self.fault.start)(Start {
                ctx,
                members: &self.members,
                nodes,
                id: self.id,
                open,
            })
            .await
        })
    }
}
