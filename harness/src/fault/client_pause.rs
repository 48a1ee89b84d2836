//! `client-pause`: a stop-the-world GC pause of one client at a point of its cycle (for an
//! adapter process, a real SIGSTOP/SIGCONT), or, at point `during-op`, of an adapter process
//! inside one of its requests (`ops`), at a moment drawn from the seed.

use super::drawing::{Aim, Drawing, Sign};
use super::entry::Entry;
use super::plan::Plan;
use super::step::{json, OpenFaults, StepAction, StepFuture};
use super::NemesisCtx;
use super::Refusal;
use super::{FaultKind, FaultSpec};
use crate::client::{InsidePause, Interrupt, PausePlan};
use crate::server::ServerKind;
use crate::vocab::PausePoint;
use crate::vocab::{MsRange, RequestOps, ScenarioError};
use lockpick_checker::exposure::Rule;
use lockpick_checker::history::F;
use std::sync::Arc;

pub struct ClientPause;

impl FaultKind for ClientPause {
    fn name(&self) -> &'static str {
        "client-pause"
    }
    fn fields(&self) -> &'static [&'static str] {
        &["duration_ms", "point", "client", "ops"]
    }
    fn verbs(&self) -> super::Verbs {
        super::Verbs::client(F::Pause, Some(F::Resume))
    }
    /// Its exposure rule ([`Rule::PauseOutlastsLease`]): the holder stopped past the lease it had left while another asked.
    fn exposure(&self) -> Rule {
        Rule::PauseOutlastsLease
    }
    fn drawing(&self) -> Drawing {
        Drawing {
            aim: Aim::ClientPause,
            size: Some("duration_ms"),
            sign: Sign::Plain,
            window: None,
            extra: super::drawing::no_extra,
        }
    }
    fn example(&self) -> super::Example {
        super::Example {
            backend: "redlock",
            body: "duration_ms = [100, 900]\npoint = \"before-write\"",
        }
    }
    /// Only a client stops; the servers are untouched.
    fn after_run(&self) -> super::AfterRun {
        super::AfterRun::Reset
    }
    fn parse(&self, e: &Entry<'_>) -> Result<Arc<dyn FaultSpec>, ScenarioError> {
        let point = e.point()?;
        let ops = match e.get::<Vec<String>>("ops")? {
            None => RequestOps::ALL,
            Some(_) if point != PausePoint::DuringOp => {
                return Err(e.at(
                    "ops",
                    format!(
                        "only a pause at point \"during-op\" stops inside requests; this one is at {:?}",
                        point.name()
                    ),
                ))
            }
            Some(names) => {
                let ops = RequestOps::from_names(names.iter().map(String::as_str)).map_err(
                    |bad| {
                        e.at(
                            "ops",
                            format!(
                                "unknown request {bad:?}; allowed: {}",
                                RequestOps::NAMES.join(", ")
                            ),
                        )
                    },
                )?;
                if ops.is_empty() {
                    return Err(e.at(
                        "ops",
                        format!("empty; allowed: one or more of {}", RequestOps::NAMES.join(", ")),
                    ));
                }
                ops
            }
        };
        Ok(Arc::new(Spec {
            point,
            duration: e.duration()?,
            client: e.client()?,
            ops,
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
    /// At `during-op`: the requests it may stop.
    ops: RequestOps,
}

impl FaultSpec for Spec {
    fn kind(&self) -> &'static dyn FaultKind {
        &ClientPause
    }
    fn label(&self) -> String {
        if self.point == PausePoint::DuringOp && self.ops != RequestOps::ALL {
            return format!(
                "{} {} ({})",
                self.name(),
                self.point.name(),
                self.ops.names().join(", ")
            );
        }
        format!("{} {}", self.name(), self.point.name())
    }
    fn inside_requests(&self) -> bool {
        self.point == PausePoint::DuringOp
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
    fn max_client_pause_ms(&self) -> Option<u64> {
        Some(self.duration.max)
    }
    fn steps_per_start(&self, _: u64) -> u64 {
        1
    }
    fn schedule(&self, plan: &mut Plan<'_>, at: u64) {
        let client = plan.client(self.client);
        let ms = plan.draw(self.duration);
        // Only a pause inside requests draws more, so the other points keep their schedules.
        let inside = (self.point == PausePoint::DuringOp).then(|| Inside {
            ops: self.ops,
            seed: plan.seed(),
        });
        plan.push(
            at,
            PauseClient {
                client,
                point: self.point,
                ms,
                inside,
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
    /// At `during-op`: which requests, and the seed of the moment inside one.
    inside: Option<Inside>,
}

#[derive(Debug)]
struct Inside {
    ops: RequestOps,
    seed: u64,
}

impl StepAction for PauseClient {
    fn tag(&self) -> &'static str {
        "pause-client"
    }
    fn fields(&self) -> Vec<(&'static str, serde_json::Value)> {
        let mut fields = vec![
            ("client", json(self.client)),
            ("point", json(self.point)),
            ("ms", json(self.ms)),
        ];
        if let Some(inside) = &self.inside {
            fields.push(("ops", json(inside.ops.names())));
            fields.push(("seed", json(inside.seed)));
        }
        fields
    }
    fn apply<'a>(&'a self, ctx: &'a NemesisCtx, _: &'a mut OpenFaults) -> StepFuture<'a> {
        // Disarmed by the nemesis when the workload ends; the pause itself ends on its own.
        let interrupt = match &self.inside {
            Some(inside) => Interrupt::PauseInside(InsidePause {
                ms: self.ms,
                ops: inside.ops,
                seed: inside.seed,
                missed: 0,
            }),
            None => Interrupt::Pause { ms: self.ms },
        };
        ctx.points[self.client].arm(PausePlan {
            point: self.point,
            interrupt,
        });
        Box::pin(async { Ok(()) })
    }
}
