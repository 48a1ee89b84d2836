//! `clock-strobe`: the target nodes' clocks flip between `offset_ms` and real time every
//! `period_ms` for a while, through libfaketime.

use super::clock::{self, ResetClock, SetClock};
use super::drawing::{Drawing, Sign};
use super::entry::Entry;
use super::plan::Plan;
use super::targets::Targets;
use super::{FaultKind, FaultSpec};
use crate::vocab::rules::{MAX_FAULT_MS, MIN_STROBE_PERIOD_MS};
use crate::vocab::{MsRange, ScenarioError};
use lockpick_checker::exposure::Rule;
use std::sync::Arc;

pub struct ClockStrobe;

impl FaultKind for ClockStrobe {
    fn name(&self) -> &'static str {
        "clock-strobe"
    }
    fn fields(&self) -> &'static [&'static str] {
        &["duration_ms", "nodes", "offset_ms", "period_ms"]
    }
    fn verbs(&self) -> super::Verbs {
        clock::VERBS
    }
    /// Its exposure rule ([`Rule::InForceDuringContendedHold`]): a strobing clock moves leases back and forth by amounts the history does not record, so only its being in force during a contended hold can be said.
    fn exposure(&self) -> Rule {
        Rule::InForceDuringContendedHold
    }
    fn drawing(&self) -> Drawing {
        Drawing::node_size_over_window("offset_ms", Sign::Amplitude).with_extra(explore_period)
    }
    fn example(&self) -> super::Example {
        super::Example {
            backend: "redlock",
            body: "nodes = [\"n3\"]\noffset_ms = 500\nperiod_ms = 40\nduration_ms = 300",
        }
    }
    fn after_run(&self) -> super::AfterRun {
        clock::AFTER_RUN
    }
    fn parse(&self, e: &Entry<'_>) -> Result<Arc<dyn FaultSpec>, ScenarioError> {
        let targets = e.targets(clock::TARGETS)?;
        let offset_ms = e.offset()?;
        let period_ms = e.need("period_ms", "")?;
        Ok(Arc::new(Spec {
            targets,
            offset_ms,
            period_ms: e.in_range("period_ms", period_ms, MIN_STROBE_PERIOD_MS, MAX_FAULT_MS)?,
            duration: e.duration()?,
        }))
    }
}

#[derive(Debug)]
struct Spec {
    targets: Targets,
    offset_ms: i64,
    period_ms: u64,
    duration: MsRange,
}

impl clock::ClockSpec for Spec {
    fn kind(&self) -> &'static dyn FaultKind {
        &ClockStrobe
    }
    fn label(&self) -> String {
        format!("{} {:+} ms", ClockStrobe.name(), self.offset_ms)
    }
    fn steps_per_start(&self, duration_ms: u64) -> u64 {
        self.duration
            .max
            .min(duration_ms)
            .div_ceil(self.period_ms.max(1))
            + 1
    }
    fn size_field(&self) -> &'static str {
        "nemesis.period_ms"
    }
    fn schedule(&self, plan: &mut Plan<'_>, at: u64) {
        let id = plan.id();
        let nodes = plan.nodes(&self.targets);
        let ms = plan.draw(self.duration);
        let mut t = 0;
        let mut flipped = true;
        // Flips after the workload's end would never run (the nemesis stops there and resets
        // every clock it moved).
        while t < ms && at + t < plan.duration_ms {
            let offset_ms = if flipped { self.offset_ms } else { 0 };
            let set = SetClock {
                nodes: nodes.clone(),
                offset_ms,
                rate_milli: None,
                id,
            };
            plan.push(at + t, set);
            flipped = !flipped;
            t += self.period_ms;
        }
        plan.push(at + ms, ResetClock { nodes, id });
    }
}

/// The `period_ms` explore writes beside a drawn strobe's offset: eight flips per offset's
/// worth of time, never under 10 ms.
fn explore_period(size_ms: u64) -> Vec<(&'static str, toml::Value)> {
    let period = (size_ms / 8).max(10);
    vec![(
        "period_ms",
        toml::Value::Integer(period.min(i64::MAX as u64) as i64),
    )]
}
