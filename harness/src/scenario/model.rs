//! The validated scenario a run is built from.

use crate::client::{ClientKind, ClientOptions};
pub use crate::fault::{Fault, Targets};
use crate::locks::{lock_label, LockPreset};
use crate::server::{NodeRule, ServerKind, ServerVersion};
use crate::vocab::{ClientTable, Discipline, LockSpec, Persistence, ResourceMode, WorkloadSpec};
use lockpick_checker::exposure::{FaultRule, LockShape, Plan};
pub use lockpick_checker::lock::Property;
use lockpick_checker::verdict::Verdict;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;

/// A scenario, checked and ready to run.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    /// The file it was read from.
    pub path: PathBuf,
    /// The verdict this scenario is meant to reach, if it declares one.
    pub expected: Option<Verdict>,
    /// Seed of every random choice in the run; `--seed` overrides it.
    pub seed: u64,
    /// The servers (`[server] kind`).
    pub server: &'static dyn ServerKind,
    /// Their release (`[server] version`, else the kind's default, Debian's); `None` for a
    /// kind that has no list of versions.
    pub version: Option<&'static ServerVersion>,
    /// How many lock nodes the server runs (named `n1`, `n2`, …).
    pub nodes: usize,
    /// What the lock nodes keep across a crash.
    pub persistence: Persistence,
    /// Whether a run watches the nodes and writes the server's own record of the lock
    /// (`server.jsonl`): `[server] record`; `None` when the scenario does not say, which is
    /// on where the kind has a watcher ([`ServerKind::watch`]) and lockpick started the
    /// servers, off on `--external` ones (a watcher turns on keyspace notifications there,
    /// a setting of someone else's server).
    pub record_server: Option<bool>,
    /// The client that takes the lock on them (`[client]`).
    pub client: ClientSpec,
    pub lock: LockSpec,
    pub workload: WorkloadSpec,
    pub resource: ResourceMode,
    pub property: Property,
    /// How long clients may want the lock with nobody getting it, outside fault windows,
    /// before the run is called deadlocked.
    pub deadlock_ms: u64,
    pub nemesis: Nemesis,
}

impl Scenario {
    /// Checks that this scenario can run against servers it did not start, `addrs` being the
    /// client address of each node in node order (`--external`): the server kind must be one
    /// whose clients need nothing but those addresses, there must be one per node, and every fault
    /// must be one that works through the proxies or on clients. The error reads after
    /// "failed to".
    pub fn check_external(&self, addrs: &[std::net::SocketAddr]) -> Result<(), String> {
        if let Err(why) = self.server.capabilities().external {
            return Err(format!(
                "run {} on external servers: server {:?} cannot: {why}",
                self.name,
                self.server.name()
            ));
        }
        if addrs.len() != self.nodes {
            return Err(format!(
                "run {} on external servers: it has {} node(s) and --external names {} address(es); give one per node, in order n1, n2, …",
                self.name,
                self.nodes,
                addrs.len()
            ));
        }
        for (i, fault) in self.nemesis.faults.iter().enumerate() {
            if let Some(why) = fault.spec.needs_own_nodes() {
                return Err(format!(
                    "run {} on external servers: fault {} ({}) cannot run there: {why}; allowed with --external: client-pause, client-crash, latency, partition",
                    self.name,
                    i + 1,
                    fault.spec.name()
                ));
            }
        }
        Ok(())
    }

    /// Whether any fault moves a node's clock, so the nodes must run under libfaketime.
    pub fn has_clock_faults(&self) -> bool {
        self.nemesis.faults.iter().any(|f| f.spec.moves_clocks())
    }

    /// Names of the lock nodes, `n1` … `nN`.
    pub fn node_names(&self) -> Vec<String> {
        (1..=self.nodes).map(|i| format!("n{i}")).collect()
    }
}

/// The client of a scenario: its kind and its options as read from `[client]`.
#[derive(Debug, Clone)]
pub struct ClientSpec {
    pub kind: &'static dyn ClientKind,
    pub options: Arc<dyn ClientOptions>,
    /// Whether the client checks its lease before writing (`[client] discipline`; the kind's
    /// default when absent).
    pub discipline: Discipline,
}

/// A fault left out when a scenario runs on a server that cannot take it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedFault {
    /// Position of the fault in the scenario's `[[nemesis]]` list.
    pub index: usize,
    pub reason: String,
}

impl Scenario {
    /// This scenario with `lock` (server kind, client kind with its default options): the same
    /// workload, seed and faults, minus the faults that server cannot take, which are returned
    /// with the reason. The node count stays when the new server and client allow it, else it
    /// is their default. The scenario's own lock keeps the scenario's `[client]` options (an
    /// `idle_session_timeout_ms` may be what the scenario is about) and its expected verdict,
    /// which was promised for that one.
    pub fn with_lock(&self, lock: &LockPreset) -> (Scenario, Vec<SkippedFault>) {
        let mut s = self.clone();
        let (server, client) = (lock.server_kind(), lock.client_kind());
        if lock_label(server, client) != self.lock_name() {
            s.expected = None;
            s.client = ClientSpec {
                kind: client,
                options: client
                    .options(&ClientTable::defaults())
                    .expect("every client kind's defaults are valid (tested)"),
                discipline: client.default_discipline(),
            };
        }
        // Another server kind runs its own default release; the same kind keeps the file's.
        if server.name() != self.server.name() {
            s.version = server.versions().first();
        }
        s.server = server;
        let rule = node_rule(server, client);
        if !rule.allows(s.nodes) {
            s.nodes = rule.default;
        }
        let mut skipped = Vec::new();
        let mut index = 0;
        s.nemesis.faults.retain(|f| {
            let reason = (f.spec.cannot_run_on(server).map(|r| r.why))
                .or_else(|| inside_requests_refused(&*f.spec, client));
            if let Some(reason) = reason.clone() {
                skipped.push(SkippedFault { index, reason });
            }
            index += 1;
            reason.is_none()
        });
        (s, skipped)
    }

    /// How this scenario's run is judged exposed: each fault's rule, the lock's lease (its
    /// `lease_ms`, else its `ttl_ms`, for grants whose history records none) and the nodes
    /// that grant it.
    pub fn exposure_plan(&self) -> Plan {
        let (nodes, quorum) = self.server.granting(&self.node_names());
        Plan {
            faults: (self.nemesis.faults.iter())
                .map(|f| {
                    let verbs = f.spec.kind().verbs();
                    FaultRule {
                        verb: verbs.opens,
                        target: verbs.target,
                        rule: f.spec.kind().exposure(),
                    }
                })
                .collect(),
            lock: LockShape {
                lease_ms: Some(self.lock.lease_ms.unwrap_or(self.lock.ttl_ms)),
                nodes,
                quorum,
                waiter_sessions: self.server.waiters_keep_a_session(),
                renewed_unseen: self.lock.renews,
            },
        }
    }

    /// About how long a run of this scenario takes: its workload, its servers' start and stop
    /// and its clients' start. What shards are balanced by.
    pub fn expected_run_ms(&self) -> u64 {
        self.workload.duration_ms + self.server.start_cost_ms() + self.client.kind.start_cost_ms()
    }

    /// The server and its release as a run's record names them: `etcd 3.6`, or `redis`.
    pub fn server_label(&self) -> String {
        match self.version {
            Some(v) => format!("{} {}", self.server.name(), v.name),
            None => self.server.name().to_owned(),
        }
    }

    /// The name of this scenario's lock: a preset's (`redis`, `redlock`, …) or
    /// `<client>@<server>`.
    pub fn lock_name(&self) -> String {
        lock_label(self.server, self.client.kind)
    }
}

/// The node counts a client kind on a server kind allows, and its default.
pub fn node_rule(server: &dyn ServerKind, client: &dyn ClientKind) -> NodeRule {
    let rule = server.nodes();
    client.nodes().map_or(rule, |c| rule.narrowed_by(c))
}

/// The fault schedule.
#[derive(Debug, Clone, Default)]
pub struct Nemesis {
    pub faults: Vec<Fault>,
}

/// Why a fault that stops clients inside their requests cannot stop clients of `client`, if
/// it cannot: only an adapter process is stopped with a request in flight.
pub(crate) fn inside_requests_refused(
    spec: &dyn crate::fault::FaultSpec,
    client: &dyn crate::client::ClientKind,
) -> Option<String> {
    (spec.inside_requests() && !client.stops_inside_requests()).then(|| {
        format!(
            "{} stops an adapter process inside a request; client {:?} is not one (allowed with kind = \"process\"; at the client loop's points: after-acquire, before-write, before-release)",
            spec.label(),
            client.name()
        )
    })
}

#[cfg(test)]
mod tests {
    use crate::locks::find_lock;
    use crate::scenario::parse_scenario;
    use std::path::Path;

    const SESSION_TIMEOUT: &str = r#"name = "t"
description = "an advisory lock whose session the server ends after 1 s idle"
expected = "invalid"

[server]
kind = "postgres"

[client]
kind = "pg-advisory"
idle_session_timeout_ms = 1000

[workload]
kind = "fenced-write"
clients = 2
duration_ms = 1000
"#;

    #[test]
    fn the_own_lock_keeps_the_client_options_and_another_gets_its_defaults() {
        let scenario = parse_scenario(Path::new("t.toml"), SESSION_TIMEOUT).unwrap();
        let (own, _) = scenario.with_lock(find_lock("pg-advisory").unwrap());
        let options = format!("{:?}", own.client.options);
        assert!(
            options.contains("idle_session_timeout_ms: Some(1000)"),
            "{options}"
        );
        assert!(own.expected.is_some());
        let (other, _) = scenario.with_lock(find_lock("mysql-get-lock").unwrap());
        let options = format!("{:?}", other.client.options);
        assert!(options.contains("wait_timeout_s: None"), "{options}");
        assert_eq!(other.client.kind.name(), "mysql-get-lock");
        assert!(other.expected.is_none());
    }
}
