//! `failover`: the primary `n1` killed (SIGKILL), its replica `n2` promoted, and the clients'
//! address (the proxy `n1`) pointed at the promoted replica, as an operator or a failover
//! manager (Patroni, repmgr) would do when the primary dies. Only on server kinds that run a
//! replica ([`crate::server::Capabilities::failover`]). It happens once and is not healed: the
//! old primary stays down, since starting it again would make a second primary.

use super::act::{nodes_value, perform};
use super::drawing::{Aim, Drawing};
use super::entry::Entry;
use super::plan::Plan;
use super::step::{json, OpenFaults, StepAction, StepFuture};
use super::NemesisCtx;
use super::Refusal;
use super::{unsupported, FaultKind, FaultSpec};
use crate::server::ServerKind;
use crate::vocab::ScenarioError;
use lockpick_checker::exposure::Rule;
use lockpick_checker::history::F;
use std::sync::Arc;

pub struct Failover;

impl FaultKind for Failover {
    fn name(&self) -> &'static str {
        "failover"
    }
    fn fields(&self) -> &'static [&'static str] {
        &[]
    }
    fn verbs(&self) -> super::Verbs {
        super::Verbs::nodes(F::Failover, None)
    }
    /// Its exposure rule ([`Rule::InForceDuringContendedHold`]): a promoted replica may lack the grant of a hold in force; whether it replicated is not in the history.
    fn exposure(&self) -> Rule {
        Rule::InForceDuringContendedHold
    }
    fn drawing(&self) -> Drawing {
        Drawing::without_size(Aim::Once)
    }
    fn example(&self) -> super::Example {
        super::Example {
            backend: "postgres-async-replica/pg-lease-row",
            body: "",
        }
    }
    fn after_run(&self) -> super::AfterRun {
        super::AfterRun::Restart(
            "a promoted replica stays the primary, and the old primary is no longer one; only a restart puts the pair back",
        )
    }
    fn parse(&self, e: &Entry<'_>) -> Result<Arc<dyn FaultSpec>, ScenarioError> {
        let once = "a failover happens once: the old primary stays down and there is no \
                    second replica to promote; allowed: at_ms alone";
        if e.span("every_ms").is_some() {
            return Err(e.at("every_ms", once));
        }
        if e.get::<u64>("count")?.is_some_and(|c| c > 1) {
            return Err(e.at("count", once));
        }
        Ok(Arc::new(Spec))
    }
}

#[derive(Debug)]
struct Spec;

impl FaultSpec for Spec {
    fn kind(&self) -> &'static dyn FaultKind {
        &Failover
    }
    fn label(&self) -> String {
        self.name().to_owned()
    }
    fn cannot_run_on(&self, server: &dyn ServerKind) -> Option<Refusal> {
        unsupported(
            self.name(),
            server,
            "it promotes the replica of a primary",
            server.capabilities().failover,
        )
    }
    fn needs_own_nodes(&self) -> Option<&'static str> {
        Some("it kills the primary and promotes a replica lockpick started")
    }
    fn moves_clocks(&self) -> bool {
        false
    }
    fn steps_per_start(&self, _: u64) -> u64 {
        1
    }
    fn schedule(&self, plan: &mut Plan<'_>, at: u64) {
        let nodes = plan.nodes(&super::targets::Targets::All);
        plan.push(
            at,
            FailOver {
                primary: nodes[0].clone(),
                replica: nodes[1].clone(),
            },
        );
    }
}

/// Kill `primary`, promote `replica`, point the clients' address at it.
#[derive(Debug)]
struct FailOver {
    primary: String,
    replica: String,
}

impl StepAction for FailOver {
    fn tag(&self) -> &'static str {
        "failover"
    }
    fn fields(&self) -> Vec<(&'static str, serde_json::Value)> {
        vec![
            ("primary", json(&self.primary)),
            ("replica", json(&self.replica)),
        ]
    }
    fn apply<'a>(&'a self, ctx: &'a NemesisCtx, _: &'a mut OpenFaults) -> StepFuture<'a> {
        let (primary, replica) = (&self.primary, &self.replica);
        let note = format!(
            "SIGKILL the primary {primary}, promote the replica {replica}, point the clients' \
             address {primary} at it"
        );
        let value = nodes_value(&[primary.clone(), replica.clone()], Some(note));
        Box::pin(perform(ctx, F::Failover, value, async move {
            let replica_addr = {
                let mut supervisor = ctx.supervisor.lock().await;
                supervisor.kill(primary).await?;
                supervisor.promote(replica).await?
            };
            ctx.proxies.repoint(primary, replica_addr).await?;
            Ok(())
        }))
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::parse_scenario;
    use std::path::Path;

    fn scenario(server: &str, nemesis: &str) -> Result<crate::scenario::Scenario, String> {
        let text = format!(
            "name = \"t\"\n[server]\nkind = \"{server}\"\n[client]\nkind = \"pg-lease-row\"\n\
             [workload]\nkind = \"fenced-write\"\nclients = 3\nduration_ms = 5000\n\
             [[nemesis]]\nfault = \"failover\"\nat_ms = 1000\n{nemesis}"
        );
        parse_scenario(Path::new("t.toml"), &text).map_err(|e| e.to_string())
    }

    #[test]
    fn a_server_without_a_replica_is_refused_with_why() {
        let err = scenario("postgres", "").unwrap_err();
        assert!(
            err.contains("t.toml:11: field `nemesis.fault`: failover cannot run on server \"postgres\" (it promotes the replica of a primary): it is a single server without a replica (use server kind postgres-async-replica or postgres-sync-replica)"),
            "{err}"
        );
        for server in ["postgres-async-replica", "postgres-sync-replica"] {
            scenario(server, "").unwrap_or_else(|e| panic!("{e}"));
        }
    }

    #[test]
    fn a_recurring_failover_is_refused_at_its_field() {
        let err = scenario("postgres-async-replica", "every_ms = 1000").unwrap_err();
        assert!(
            err.contains("t.toml:13: field `nemesis.every_ms`: a failover happens once"),
            "{err}"
        );
        let err = scenario("postgres-async-replica", "count = 2").unwrap_err();
        assert!(err.contains(":13: field `nemesis.count`"), "{err}");
        scenario("postgres-async-replica", "count = 1").unwrap_or_else(|e| panic!("{e}"));
    }
}
