//! `latency`: latency (and jitter) on the links from clients to the target nodes (or the named
//! peer links), through their proxies, for a while.

use super::act::perform;
use super::drawing::{Drawing, Sign};
use super::entry::Entry;
use super::links::{self, LinksHeal, Reach};
use super::plan::Plan;
use super::step::{json, OpenFaults, StepAction, StepFuture};
use super::NemesisCtx;
use super::Refusal;
use super::{FaultKind, FaultSpec};
use crate::server::ServerKind;
use crate::vocab::rules::MAX_LATENCY_MS;
use crate::vocab::{MsRange, ScenarioError};
use lockpick_checker::exposure::Rule;
use lockpick_checker::history::{Value, F};
use std::sync::Arc;

pub struct Latency;

impl FaultKind for Latency {
    fn name(&self) -> &'static str {
        "latency"
    }
    fn fields(&self) -> &'static [&'static str] {
        &["duration_ms", "nodes", "links", "latency_ms", "jitter_ms"]
    }
    fn verbs(&self) -> super::Verbs {
        super::Verbs::nodes(F::Slow, Some(F::Heal))
    }
    /// Its exposure rule ([`Rule::DelayPastLease`]): a grant or renewal slowed past its lease may come back already expired.
    fn exposure(&self) -> Rule {
        Rule::DelayPastLease
    }
    fn drawing(&self) -> Drawing {
        Drawing::node_size_over_window("latency_ms", Sign::Plain)
    }
    fn example(&self) -> super::Example {
        super::Example {
            backend: "redlock",
            body: "latency_ms = 40\njitter_ms = 5\nduration_ms = 300",
        }
    }
    /// Only the proxies slow down, and the reset heals every proxy (latency on peer links
    /// restarts: see `Reach::after_run`).
    fn after_run(&self) -> super::AfterRun {
        super::AfterRun::Reset
    }
    fn parse(&self, e: &Entry<'_>) -> Result<Arc<dyn FaultSpec>, ScenarioError> {
        let reach = Reach::read(e)?;
        let latency_ms = e.need("latency_ms", "")?;
        let latency_ms = e.in_range("latency_ms", latency_ms, 0, MAX_LATENCY_MS)?;
        let jitter_ms = match e.get("jitter_ms")? {
            Some(j) => e.in_range("jitter_ms", j, 0, MAX_LATENCY_MS)?,
            None => 0,
        };
        Ok(Arc::new(Spec {
            reach,
            latency_ms,
            jitter_ms,
            duration: e.duration()?,
        }))
    }
}

#[derive(Debug)]
struct Spec {
    reach: Reach,
    latency_ms: u64,
    jitter_ms: u64,
    duration: MsRange,
}

impl FaultSpec for Spec {
    fn after_run(&self) -> super::AfterRun {
        self.reach.after_run(self.kind().after_run())
    }
    fn kind(&self) -> &'static dyn FaultKind {
        &Latency
    }
    fn label(&self) -> String {
        format!("latency {} ms", self.latency_ms)
    }
    fn cannot_run_on(&self, server: &dyn ServerKind) -> Option<Refusal> {
        self.reach.cannot_run_on(self.name(), server)
    }
    fn needs_own_nodes(&self) -> Option<&'static str> {
        self.reach.needs_own_nodes()
    }
    fn moves_clocks(&self) -> bool {
        false
    }
    fn steps_per_start(&self, _: u64) -> u64 {
        2
    }
    fn schedule(&self, plan: &mut Plan<'_>, at: u64) {
        let (latency_ms, jitter_ms) = (self.latency_ms, self.jitter_ms);
        links::window(plan, at, &self.reach, self.duration, |nodes, id| Slow {
            nodes,
            latency_ms,
            jitter_ms,
            id,
        });
    }
}

/// Add latency to the links of `nodes`.
#[derive(Debug)]
struct Slow {
    nodes: Vec<String>,
    latency_ms: u64,
    jitter_ms: u64,
    id: usize,
}

impl StepAction for Slow {
    fn tag(&self) -> &'static str {
        "slow"
    }
    fn fields(&self) -> Vec<(&'static str, serde_json::Value)> {
        vec![
            ("nodes", json(&self.nodes)),
            ("latency_ms", json(self.latency_ms)),
            ("jitter_ms", json(self.jitter_ms)),
        ]
    }
    fn apply<'a>(&'a self, ctx: &'a NemesisCtx, open: &'a mut OpenFaults) -> StepFuture<'a> {
        let value = Value {
            nodes: self.nodes.clone(),
            ms: Some(self.latency_ms),
            jitter_ms: Some(self.jitter_ms),
            ..Value::default()
        };
        open.open(self.id, Box::new(LinksHeal(self.nodes.clone())));
        Box::pin(perform(ctx, F::Slow, value, async move {
            for node in &self.nodes {
                ctx.proxies
                    .slow(node, self.latency_ms, self.jitter_ms)
                    .await?;
            }
            Ok(())
        }))
    }
}
