//! `client-pause`: a stop-the-world GC pause of one client at a point of its cycle (for an
//! adapter process, a real SIGSTOP/SIGCONT).

use super::entry::Entry;
use super::plan::Plan;
use super::step::{json, OpenFaults, StepAction, StepFuture};
use super::NemesisCtx;
use super::{FaultKind, FaultSpec};
use crate::client::{Interrupt, PausePlan};
use crate::server::ServerKind;
use crate::vocab::PausePoint;
use crate::vocab::{MsRange, ScenarioError};
use lockpick_checker::history::F;
use std::sync::Arc;

pub struct ClientPause;

impl FaultKind for ClientPause {
    fn name(&self) -> &'static str {
        "client-pause"
    }
    fn fields(&self) -> &'static [&'static str] {
        &["duration_ms", "point", "client"]
    }
    fn verbs(&self) -> super::Verbs {
        super::Verbs::client(F::Pause, Some(F::Resume))
    }
    fn parse(&self, e: &Entry<'_>) -> Result<Arc<dyn FaultSpec>, ScenarioError> {
        Ok(Arc::new(Spec {
            point: e.point()?,
            duration: e.duration()?,
            client: e.client()?,
        }))
    }
}

/// Stop one client at `point` for `duration`.
#[derive(Debug)]
struct Spec {
    point: PausePoint,
    duration: MsRange,
    /// Which client (its index, from 0); drawn with the seed if absent.
    client: Option<usize>,
}

impl FaultSpec for Spec {
    fn kind(&self) -> &'static dyn FaultKind {
        &ClientPause
    }
    fn label(&self) -> String {
        format!("{} {}", self.name(), self.point.name())
    }
    fn cannot_run_on(&self, _: &dyn ServerKind) -> Option<String> {
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
    fn max_client_pause_ms(&self) -> Option<u64> {
        Some(self.duration.max)
    }
    fn steps_per_start(&self, _: u64) -> u64 {
        1
    }
    fn schedule(&self, plan: &mut Plan<'_>, at: u64) {
        let client = plan.client(self.client);
        let ms = plan.draw(self.duration);
        plan.push(
            at,
            PauseClient {
                client,
                point: self.point,
                ms,
            },
        );
    }
}

/// Arm a pause on a client, taken when it reaches `point`.
#[derive(Debug)]
struct PauseClient {
    client: usize,
    point: PausePoint,
    ms: u64,
}

impl StepAction for PauseClient {
    fn tag(&self) -> &'static str {
        "pause-client"
    }
    fn fields(&self) -> Vec<(&'static str, serde_json::Value)> {
        vec![
            ("client", json(self.client)),
            ("point", json(self.point)),
            ("ms", json(self.ms)),
        ]
    }
    fn apply<'a>(&'a self, ctx: &'a NemesisCtx, _: &'a mut OpenFaults) -> StepFuture<'a> {
        // Disarmed by the nemesis when the workload ends; the pause itself ends on its own.
        ctx.points[self.client].arm(PausePlan {
            point: self.point,
            interrupt: Interrupt::Pause { ms: self.ms },
        });
        Box::pin(async { Ok(()) })
    }
}
