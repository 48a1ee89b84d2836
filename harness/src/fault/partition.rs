//! `partition`: the links from clients to the target nodes (or the named peer links) cut at
//! their proxies, for a while.

use super::act::{nodes_value, perform};
use super::drawing::Drawing;
use super::entry::Entry;
use super::links::{self, LinksHeal, Reach};
use super::plan::Plan;
use super::step::{json, OpenFaults, StepAction, StepFuture};
use super::NemesisCtx;
use super::Refusal;
use super::{FaultKind, FaultSpec};
use crate::server::ServerKind;
use crate::vocab::{MsRange, ScenarioError};
use lockpick_checker::exposure::Rule;
use lockpick_checker::history::F;
use std::sync::Arc;

pub struct Partition;

impl FaultKind for Partition {
    fn name(&self) -> &'static str {
        "partition"
    }
    fn fields(&self) -> &'static [&'static str] {
        &["duration_ms", "nodes", "links"]
    }
    fn verbs(&self) -> super::Verbs {
        super::Verbs::nodes(F::Partition, Some(F::Heal))
    }
    /// Its exposure rule ([`Rule::CutPastLease`]): the holder cut from a quorum cannot renew, and loses the lock once its lease runs out.
    fn exposure(&self) -> Rule {
        Rule::CutPastLease
    }
    fn drawing(&self) -> Drawing {
        Drawing::node_window()
    }
    fn example(&self) -> super::Example {
        super::Example {
            backend: "redlock",
            body: "nodes = \"random-one\"\nduration_ms = 300",
        }
    }
    /// Only client links through the proxies are cut, and the reset heals every proxy (a
    /// partition of peer links restarts: see `Reach::after_run`).
    fn after_run(&self) -> super::AfterRun {
        super::AfterRun::Reset
    }
    fn parse(&self, e: &Entry<'_>) -> Result<Arc<dyn FaultSpec>, ScenarioError> {
        Ok(Arc::new(Spec {
            reach: Reach::read(e)?,
            duration: e.duration()?,
        }))
    }
}

#[derive(Debug)]
struct Spec {
    reach: Reach,
    duration: MsRange,
}

impl FaultSpec for Spec {
    fn after_run(&self) -> super::AfterRun {
        self.reach.after_run(self.kind().after_run())
    }
    fn kind(&self) -> &'static dyn FaultKind {
        &Partition
    }
    fn label(&self) -> String {
        self.name().to_owned()
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
        links::window(plan, at, &self.reach, self.duration, |nodes, id| Cut {
            nodes,
            id,
        });
    }
}

/// Cut the links of `nodes`.
#[derive(Debug)]
struct Cut {
    nodes: Vec<String>,
    id: usize,
}

impl StepAction for Cut {
    fn tag(&self) -> &'static str {
        "partition"
    }
    fn fields(&self) -> Vec<(&'static str, serde_json::Value)> {
        vec![("nodes", json(&self.nodes))]
    }
    fn apply<'a>(&'a self, ctx: &'a NemesisCtx, open: &'a mut OpenFaults) -> StepFuture<'a> {
        open.open(self.id, Box::new(LinksHeal(self.nodes.clone())));
        Box::pin(perform(
            ctx,
            F::Partition,
            nodes_value(&self.nodes, None),
            async move {
                for node in &self.nodes {
                    ctx.proxies.partition(node).await?;
                }
                Ok(())
            },
        ))
    }
}
