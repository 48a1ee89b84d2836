//! `isolate`: the peer links between the target members and the other members of a cluster
//! cut (a minority or majority split) for a while; clients still reach every member.

use super::act::{nodes_value, perform};
use super::drawing::Drawing;
use super::entry::Entry;
use super::members::{self, Members};
use super::plan::Plan;
use super::step::{json, Heal, OpenFaults, StepAction, StepFuture};
use super::targets::{TargetRule, Targets};
use super::{unsupported, FaultKind, FaultSpec};
use super::{NemesisCtx, NemesisError};
use crate::server::ServerKind;
use crate::vocab::{MsRange, ScenarioError};
use lockpick_checker::history::F;
use std::sync::Arc;

pub struct Isolate;

impl FaultKind for Isolate {
    fn name(&self) -> &'static str {
        "isolate"
    }
    fn fields(&self) -> &'static [&'static str] {
        &["duration_ms", "nodes"]
    }
    fn verbs(&self) -> super::Verbs {
        super::Verbs::nodes(F::Partition, Some(F::Heal))
    }
    fn drawing(&self) -> Drawing {
        Drawing::node_window()
    }
    fn after_run(&self) -> super::AfterRun {
        super::AfterRun::Restart(
            "a member cut from its peers may still be catching up or voting when the next run would start; a reset cannot tell that it settled",
        )
    }
    fn parse(&self, e: &Entry<'_>) -> Result<Arc<dyn FaultSpec>, ScenarioError> {
        Ok(Arc::new(Spec {
            targets: e.targets(TargetRule {
                members: true,
                all: false,
            })?,
            duration: e.duration()?,
        }))
    }
}

#[derive(Debug)]
struct Spec {
    targets: Targets,
    duration: MsRange,
}

impl FaultSpec for Spec {
    fn kind(&self) -> &'static dyn FaultKind {
        &Isolate
    }
    fn label(&self) -> String {
        self.name().to_owned()
    }
    fn cannot_run_on(&self, server: &dyn ServerKind) -> Option<String> {
        let peers = server.capabilities().peers;
        unsupported(self.name(), server, "it acts on cluster members", peers)
    }
    fn needs_own_nodes(&self) -> Option<&'static str> {
        Some("it cuts peer links, which run through lockpick's proxies only in a cluster lockpick started")
    }
    fn moves_clocks(&self) -> bool {
        false
    }
    fn steps_per_start(&self, _: u64) -> u64 {
        2
    }
    fn schedule(&self, plan: &mut Plan<'_>, at: u64) {
        members::window(
            plan,
            at,
            &self.targets,
            self.duration,
            "rejoin",
            |members, id| Cut { members, id },
        );
    }
}

/// Cut the peer links between `members` and the other members.
#[derive(Debug)]
struct Cut {
    members: Members,
    id: usize,
}

impl StepAction for Cut {
    fn tag(&self) -> &'static str {
        "isolate"
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
            let Some(cluster) = ctx.cluster.as_ref() else {
                return Err(NemesisError::NotACluster { fault: "isolate" });
            };
            let others: Vec<&str> = cluster
                .members()
                .iter()
                .filter(|m| !nodes.contains(m))
                .map(String::as_str)
                .collect();
            let note = format!(
                "{} and {}",
                self.members.note("peer links cut between", &nodes),
                others.join(",")
            );
            open.open(self.id, Box::new(Rejoin(nodes.clone())));
            perform(ctx, F::Partition, nodes_value(&nodes, Some(note)), async {
                Ok(cluster.isolate(&nodes).await?)
            })
            .await
        })
    }
}

/// Restores the peer links of these members.
struct Rejoin(Vec<String>);

impl Heal for Rejoin {
    fn heal<'a>(&'a self, ctx: &'a NemesisCtx) -> StepFuture<'a> {
        Box::pin(perform(ctx, F::Heal, nodes_value(&self.0, None), async {
            if let Some(cluster) = &ctx.cluster {
                cluster.heal(&self.0).await?;
            }
            Ok(())
        }))
    }
}
