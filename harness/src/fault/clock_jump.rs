//! `clock-jump`: the target nodes' wall clocks jump by `offset_ms` (negative: back) for a
//! while, through libfaketime.

use super::clock;
use super::drawing::{Drawing, Sign};
use super::entry::Entry;
use super::plan::Plan;
use super::targets::Targets;
use super::{FaultKind, FaultSpec};
use crate::server::ServerKind;
use crate::vocab::{MsRange, ScenarioError};
use lockpick_checker::history::F;
use std::sync::Arc;

pub struct ClockJump;

impl FaultKind for ClockJump {
    fn name(&self) -> &'static str {
        "clock-jump"
    }
    fn fields(&self) -> &'static [&'static str] {
        &["duration_ms", "nodes", "offset_ms"]
    }
    fn verbs(&self) -> super::Verbs {
        super::Verbs::nodes(F::Clock, Some(F::ClockReset))
    }
    fn drawing(&self) -> Drawing {
        Drawing::node_size_over_window("offset_ms", Sign::Either)
    }
    /// The nemesis puts every clock it moved back to real time when the run ends; what the moved clock expired or kept is cleared by the reset.
    fn after_run(&self) -> super::AfterRun {
        super::AfterRun::Reset
    }
    fn parse(&self, e: &Entry<'_>) -> Result<Arc<dyn FaultSpec>, ScenarioError> {
        Ok(Arc::new(Spec {
            targets: e.targets(clock::TARGETS)?,
            offset_ms: e.offset()?,
            duration: e.duration()?,
        }))
    }
}

#[derive(Debug)]
struct Spec {
    targets: Targets,
    offset_ms: i64,
    duration: MsRange,
}

impl FaultSpec for Spec {
    fn kind(&self) -> &'static dyn FaultKind {
        &ClockJump
    }
    fn label(&self) -> String {
        format!("{} {:+} ms", self.name(), self.offset_ms)
    }
    fn cannot_run_on(&self, server: &dyn ServerKind) -> Option<String> {
        clock::cannot_move_clocks(self.name(), server)
    }
    fn needs_own_nodes(&self) -> Option<&'static str> {
        Some(clock::NEEDS_OWN_NODES)
    }
    fn moves_clocks(&self) -> bool {
        true
    }
    fn steps_per_start(&self, _: u64) -> u64 {
        2
    }
    fn schedule(&self, plan: &mut Plan<'_>, at: u64) {
        clock::window(plan, at, &self.targets, self.duration, self.offset_ms, None);
    }
}
