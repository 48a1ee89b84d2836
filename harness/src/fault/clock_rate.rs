//! `clock-rate`: the target nodes' clocks run at `rate` times real speed for a while,
//! through libfaketime.

use super::clock;
use super::drawing::Drawing;
use super::entry::Entry;
use super::plan::Plan;
use super::targets::Targets;
use super::{FaultKind, FaultSpec};
use crate::vocab::{MsRange, ScenarioError};
use lockpick_checker::exposure::Rule;
use std::sync::Arc;

pub struct ClockRate;

impl FaultKind for ClockRate {
    fn name(&self) -> &'static str {
        "clock-rate"
    }
    fn fields(&self) -> &'static [&'static str] {
        &["duration_ms", "nodes", "rate"]
    }
    fn verbs(&self) -> super::Verbs {
        clock::VERBS
    }
    /// Its exposure rule ([`Rule::InForceDuringContendedHold`]): a clock that runs fast moves leases by an amount the history does not record, so only its being in force during a contended hold can be said.
    fn exposure(&self) -> Rule {
        Rule::InForceDuringContendedHold
    }
    fn drawing(&self) -> Drawing {
        Drawing::node_window().with_extra(explore_rate)
    }
    fn example(&self) -> super::Example {
        super::Example {
            backend: "redlock",
            body: "nodes = [\"n3\"]\nrate = 10\nduration_ms = 300",
        }
    }
    fn after_run(&self) -> super::AfterRun {
        clock::AFTER_RUN
    }
    fn parse(&self, e: &Entry<'_>) -> Result<Arc<dyn FaultSpec>, ScenarioError> {
        let targets = e.targets(clock::TARGETS)?;
        let rate: f64 = e.need("rate", " (times real speed, e.g. 10 or 0.5)")?;
        if !(0.001..=1000.0).contains(&rate) {
            return Err(e.at(
                "rate",
                format!("{rate} is out of range; allowed: 0.001 to 1000"),
            ));
        }
        Ok(Arc::new(Spec {
            targets,
            rate_milli: (rate * 1000.0).round() as u64,
            duration: e.duration()?,
        }))
    }
}

#[derive(Debug)]
struct Spec {
    targets: Targets,
    /// Thousandths of real speed.
    rate_milli: u64,
    duration: MsRange,
}

impl clock::ClockSpec for Spec {
    fn kind(&self) -> &'static dyn FaultKind {
        &ClockRate
    }
    fn label(&self) -> String {
        format!("{} x{}", ClockRate.name(), self.rate_milli as f64 / 1000.0)
    }
    fn schedule(&self, plan: &mut Plan<'_>, at: u64) {
        let rate = Some(self.rate_milli);
        clock::window(plan, at, &self.targets, self.duration, 0, rate);
    }
}

/// How fast explore runs a clock: fast enough to expire a lease early.
pub const EXPLORE_RATE: f64 = 10.0;

/// The `rate` explore writes beside a drawn clock-rate's length.
fn explore_rate(_size_ms: u64) -> Vec<(&'static str, toml::Value)> {
    vec![("rate", EXPLORE_RATE.into())]
}
