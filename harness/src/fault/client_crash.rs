//! `client-crash`: one client dies at a point of its cycle (an adapter process is SIGKILLed)
//! and never releases what it holds.

use super::drawing::{Aim, Drawing};
use super::entry::Entry;
use super::plan::Plan;
use super::step::{json, OpenFaults, StepAction, StepFuture};
use super::NemesisCtx;
use super::Refusal;
use super::{FaultKind, FaultSpec};
use crate::client::{Interrupt, PausePlan};
use crate::server::ServerKind;
use crate::vocab::PausePoint;
use crate::vocab::ScenarioError;
use lockpick_checker::exposure::Rule;
use lockpick_checker::history::F;
use std::sync::Arc;

pub struct ClientCrash;

impl FaultKind for ClientCrash {
    fn name(&self) -> &'static str {
        "client-crash"
    }
    fn fields(&self) -> &'static [&'static str] {
        &["point", "client"]
    }
    fn verbs(&self) -> super::Verbs {
        super::Verbs::client(F::Crash, None)
    }
    /// Its exposure rule ([`Rule::HolderCrashed`]): the crashed client held the lock and another asked after: only its lease can free it (liveness).
    fn exposure(&self) -> Rule {
        Rule::HolderCrashed
    }
    fn drawing(&self) -> Drawing {
        Drawing::without_size(Aim::ClientCrash)
    }
    fn example(&self) -> super::Example {
        super::Example {
            backend: "redlock",
            body: "client = 1",
        }
    }
    /// A client process dies; the servers are untouched, and the sessions it left are ended by the reset.
    fn after_run(&self) -> super::AfterRun {
        super::AfterRun::Reset
    }
    fn parse(&self, e: &Entry<'_>) -> Result<Arc<dyn FaultSpec>, ScenarioError> {
        let point = e.point()?;
        if point == PausePoint::DuringOp {
            return Err(e.at(
                "point",
                "a crash inside a request is not supported (yet); allowed: after-acquire, before-write, before-release",
            ));
        }
        Ok(Arc::new(Spec {
            point,
            client: e.client()?,
        }))
    }
}

/// Kill one client at `point`.
#[derive(Debug)]
struct Spec {
    point: PausePoint,
    client: Option<usize>,
}

impl FaultSpec for Spec {
    fn kind(&self) -> &'static dyn FaultKind {
        &ClientCrash
    }
    fn label(&self) -> String {
        format!("{} {}", self.name(), self.point.name())
    }
    fn cannot_run_on(&self, _: &dyn ServerKind) -> Option<Refusal> {
        None
    }
    fn needs_own_nodes(&self) -> Option<&'static str> {
        None
    }
    fn moves_clocks(&self) -> bool {
        false
    }
    fn aimed_at_client(&self) -> Option<usize> {
        self.client
    }
    fn steps_per_start(&self, _: u64) -> u64 {
        1
    }
    fn schedule(&self, plan: &mut Plan<'_>, at: u64) {
        let client = plan.client(self.client);
        plan.push(
            at,
            CrashClient {
                client,
                point: self.point,
            },
        );
    }
}

/// Arm a crash on a client, taken when it reaches `point`.
#[derive(Debug)]
struct CrashClient {
    client: usize,
    point: PausePoint,
}

impl StepAction for CrashClient {
    fn tag(&self) -> &'static str {
        "crash-client"
    }
    fn fields(&self) -> Vec<(&'static str, serde_json::Value)> {
        vec![("client", json(self.client)), ("point", json(self.point))]
    }
    fn apply<'a>(&'a self, ctx: &'a NemesisCtx, _: &'a mut OpenFaults) -> StepFuture<'a> {
        ctx.points[self.client].arm(PausePlan {
            point: self.point,
            interrupt: Interrupt::Crash,
        });
        Box::pin(async { Ok(()) })
    }
}
