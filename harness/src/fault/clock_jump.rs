//! `clock-jump`: the target nodes' wall clocks jump by `offset_ms` (negative: back) for a
//! while, through libfaketime.

use super::clock;
use super::drawing::{Drawing, Sign};
use super::entry::Entry;
use super::plan::Plan;
use super::targets::Targets;
use super::{FaultKind, FaultSpec};
use crate::vocab::{MsRange, ScenarioError};
use lockpick_checker::exposure::Rule;
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
        clock::VERBS
    }
    /// Its exposure rule ([`Rule::JumpPastLease`]): a forward jump past the lease left expires the key early on that node.
    fn exposure(&self) -> Rule {
        Rule::JumpPastLease
    }
    fn drawing(&self) -> Drawing {
        Drawing::node_size_over_window("offset_ms", Sign::Either)
    }
    fn example(&self) -> super::Example {
        super::Example {
            backend: "redlock",
            body: "nodes = [\"n3\"]\noffset_ms = -2000\nduration_ms = 300",
        }
    }
    fn after_run(&self) -> super::AfterRun {
        clock::AFTER_RUN
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

impl clock::ClockSpec for Spec {
    fn kind(&self) -> &'static dyn FaultKind {
        &ClockJump
    }
    fn label(&self) -> String {
        format!("{} {:+} ms", ClockJump.name(), self.offset_ms)
    }
    fn schedule(&self, plan: &mut Plan<'_>, at: u64) {
        clock::window(plan, at, &self.targets, self.duration, self.offset_ms, None);
    }
}
