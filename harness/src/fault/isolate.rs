//! `isolate`: the peer links between the target members and the other members of a cluster
//! cut (a minority or majority split) for a while; clients still reach every member.

use super::act::{nodes_value, perform};
use super::drawing::Drawing;
use super::entry::Entry;
use super::member_fault::{MemberFault, Start};
use super::step::{Heal, StepFuture};
use super::targets::TargetRule;
use super::{unsupported, FaultKind, FaultSpec};
use super::{NemesisCtx, NemesisError};
use crate::vocab::ScenarioError;
use lockpick_checker::exposure::Rule;
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
    /// Its exposure rule ([`Rule::InForceDuringContendedHold`]): clients still reach every member, so whether the cut member could still grant depends on the server; only its being in force during a contended hold can be said.
    fn exposure(&self) -> Rule {
        Rule::InForceDuringContendedHold
    }
    fn drawing(&self) -> Drawing {
        Drawing::node_window()
    }
    fn example(&self) -> super::Example {
        super::Example {
            backend: "etcd",
            body: "nodes = \"leader\"\nduration_ms = 300",
        }
    }
    fn after_run(&self) -> super::AfterRun {
        super::AfterRun::Settle(
            "a member cut from its peers may still be catching up or voting when the next run would start",
        )
    }
    fn parse(&self, e: &Entry<'_>) -> Result<Arc<dyn FaultSpec>, ScenarioError> {
        ISOLATE.parse(e)
    }
}

/// Everything else about it is every member fault's ([`MemberFault`]).
static ISOLATE: MemberFault = MemberFault {
    kind: &Isolate,
    open_tag: "isolate",
    heal_tag: "rejoin",
    targets: |e| {
        e.targets(TargetRule {
            members: true,
            all: false,
        })
    },
    cannot_run_on: |name, _, server| {
        let peers = server.capabilities().peers;
        unsupported(name, server, "it acts on cluster members", peers)
    },
    needs_own_nodes: "it cuts peer links, which run through lockpick's proxies only in a cluster lockpick started",
    start: cut,
};

/// Cuts the peer links between the nodes and the other members.
fn cut(s: Start<'_>) -> StepFuture<'_> {
    Box::pin(async move {
        let Some(cluster) = s.ctx.cluster.as_ref() else {
            return Err(NemesisError::NotACluster { fault: "isolate" });
        };
        let others: Vec<&str> = cluster
            .members()
            .iter()
            .filter(|m| !s.nodes.contains(m))
            .map(String::as_str)
            .collect();
        let note = format!(
            "{} and {}",
            s.members.note("peer links cut between", &s.nodes),
            others.join(",")
        );
        s.open.open(s.id, Box::new(Rejoin(s.nodes.clone())));
        perform(
            s.ctx,
            F::Partition,
            nodes_value(&s.nodes, Some(note)),
            async { Ok(cluster.isolate(&s.nodes).await?) },
        )
        .await
    })
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
