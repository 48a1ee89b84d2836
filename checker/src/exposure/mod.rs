//! Exposure: for each fault instance of a run, whether it opened a window in which mutual
//! exclusion could have been broken, with the times and the processes, judged from the history
//! by the rule its fault declares ([`Rule`]). A run none of whose faults was exposed could not
//! have shown a violation its faults caused: it is "not exposed", never "valid".

mod judge;
mod parts;
pub mod rule;
mod stream;
#[cfg(test)]
mod tests;

use crate::fault_verbs::Target;
use crate::faults::secs;
use crate::history::{Event, F};
use crate::verdict::Verdict;
pub use rule::Rule;
use serde::{Deserialize, Serialize};
pub use stream::ExposureStream;

/// One fault of a run's plan and the rule its instances are judged by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultRule {
    /// The verb its start is recorded under.
    pub verb: F,
    /// Whether it is aimed at nodes or at a client (a client pause and a node pause share
    /// their verb).
    pub target: Target,
    pub rule: Rule,
}

/// What the rules need to know of the lock: its lease and which nodes grant it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LockShape {
    /// The lease the lock is asked for (or its session timeout), used for a grant whose
    /// history records none; `None`: a lock without a lease (a session held by a connection).
    pub lease_ms: Option<u64>,
    /// The nodes whose grants make the lock (every node of a Redlock, etcd or ZooKeeper
    /// cluster; the primary of a replicated Redis). Empty: any node named by a fault grants it.
    pub nodes: Vec<String>,
    /// How many of `nodes` a holder must reach to keep the lock (a majority, or all of one).
    pub quorum: usize,
    /// A client waiting for the lock already holds something its session keeps (etcd's leased
    /// key, ZooKeeper's ephemeral node): a cut past the lease can end it while it waits, which
    /// the cut rule counts. False for a lock whose waiters only retry (Redis, SQL rows).
    pub waiter_sessions: bool,
    /// The client's library renews the lock by itself where the history does not show it
    /// (Hazelcast's CP session heartbeats, a library's own watchdog): a hold's lease then
    /// lasts for as long as its holder can reach the lock, not one lease from its grant, and
    /// runs out one lease after the holder fell silent at the latest.
    pub renewed_unseen: bool,
}

impl LockShape {
    /// Whether a fault on `named` touches a node that grants the lock.
    pub fn touches(&self, named: &[String]) -> bool {
        self.nodes.is_empty() || named.iter().any(|n| self.nodes.contains(n))
    }

    /// How many granting nodes a client cut from `cut` can still reach, and of how many.
    /// `None` when the lock's nodes are unknown (every cut counts).
    pub fn reachable(&self, cut: &[String]) -> Option<(usize, usize)> {
        if self.nodes.is_empty() {
            return None;
        }
        let left = self.nodes.iter().filter(|n| !cut.contains(n)).count();
        Some((left, self.nodes.len()))
    }
}

/// What a run's faults must show to have exposed the lock: a rule per fault.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Plan {
    /// The run's faults; empty for a baseline, which needs nothing.
    pub faults: Vec<FaultRule>,
    pub lock: LockShape,
}

impl Plan {
    /// A baseline: no fault, nothing to be exposed by.
    pub fn none() -> Plan {
        Plan::default()
    }

    /// The rule of the fault recorded under `verb` on `target`. Two faults of one run that
    /// share a verb and a target (a partition and an isolation; a clock jump and a clock rate)
    /// are told apart by no field of the history, so the first of them in the plan decides.
    pub fn rule_for(&self, verb: F, target: Target) -> Option<Rule> {
        self.faults
            .iter()
            .find(|f| f.verb == verb && f.target == target)
            .map(|f| f.rule)
    }
}

/// A window in which a violation was possible: a holder, and the others who asked in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    pub from_ns: u64,
    pub to_ns: u64,
    /// The process that held the lock.
    pub holder: u64,
    /// The processes that asked for the same lock inside the window.
    pub askers: Vec<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<String>,
    /// The lease the rule measured the holder's against (the grant's as the history records
    /// it, else the lock's); `None` for a lock without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_ms: Option<u64>,
}

/// One fault instance and its judgement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exposure {
    /// The verb that started it.
    pub fault: F,
    pub rule: Rule,
    pub start_ns: u64,
    /// When it was healed; `None` when it never was before the run ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<u64>,
    /// The window it opened; `None`: not exposed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
    /// Why it was exposed, or why not, for a human.
    pub why: String,
}

impl Exposure {
    /// "pause of client 3 at 1.200 s–3.400 s", "crash of n1 at 2.000 s (never restarted)".
    pub fn describe(&self) -> String {
        let target = match self.client {
            Some(c) => format!("client {c}"),
            None if self.nodes.is_empty() => "all nodes".to_owned(),
            None => self.nodes.join(","),
        };
        let when = match self.end_ns {
            Some(end) if end == self.start_ns => format!("at {}", secs(self.start_ns)),
            Some(end) => format!("at {}–{}", secs(self.start_ns), secs(end)),
            None => format!("from {} (never healed)", secs(self.start_ns)),
        };
        format!("{} of {target} {when}", self.fault)
    }

    pub fn exposed(&self) -> bool {
        self.window.is_some()
    }
}

/// How many judged fault instances a run keeps whole: an hour's soak has thousands, and each
/// kept one holds its sentence and its askers; past this they are counted, not kept (the first
/// exposed one is kept whatever its place, for the run's summary).
pub const KEPT_INSTANCES: usize = 500;

/// Every fault instance of a run, judged.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Exposures {
    /// Whether the run had faults to judge (a baseline has none and needs none).
    pub planned: bool,
    /// The instances kept whole, in the order they started: the first [`KEPT_INSTANCES`].
    pub faults: Vec<Exposure>,
    /// Instances judged past those and counted only: how many opened a window, and how many
    /// did not.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted_exposed: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted_not_exposed: u64,
    /// The planned faults no instance of which took effect, as "the partition fault never
    /// took effect before the run ended".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub never_started: Vec<String>,
}

impl Exposures {
    /// Whether the run could have shown a violation its faults caused (a baseline always).
    pub fn exposed(&self) -> bool {
        !self.planned || self.omitted_exposed > 0 || self.faults.iter().any(Exposure::exposed)
    }

    /// How many fault instances opened a window, of how many (those kept and those counted).
    pub fn count(&self) -> (usize, usize) {
        let exposed = self.faults.iter().filter(|e| e.exposed()).count();
        let omitted = (self.omitted_exposed + self.omitted_not_exposed) as usize;
        (
            exposed + self.omitted_exposed as usize,
            self.faults.len() + omitted,
        )
    }

    /// How many judged instances were counted and not kept.
    pub fn omitted(&self) -> u64 {
        self.omitted_exposed + self.omitted_not_exposed
    }

    /// `Ok(what exposed the run)` or `Err(why nothing did)`, in a sentence.
    pub fn summary(&self) -> Result<String, String> {
        if !self.planned {
            return Ok("no fault".to_owned());
        }
        let (exposed, all) = self.count();
        if let Some(first) = self.faults.iter().find(|e| e.exposed()) {
            let of = if all > 1 {
                format!(" ({exposed} of {all} fault instances exposed)")
            } else {
                String::new()
            };
            return Ok(format!("{}: {}{of}", first.describe(), first.why));
        }
        let mut why: Vec<String> = (self.faults.iter())
            .map(|e| format!("{}: {}", e.describe(), e.why))
            .collect();
        why.extend(self.never_started.iter().cloned());
        let more = why.len().saturating_sub(3) + self.omitted() as usize;
        Err(match (why.len(), more) {
            (0, _) => "no fault took effect".to_owned(),
            (_, 0) => why.join("; "),
            (n, more) => format!("{}; and {more} more", why[..n.min(3)].join("; ")),
        })
    }
}

/// Every fault instance of `events` judged against `plan`.
pub fn exposures(events: &[Event], plan: Plan) -> Exposures {
    let mut stream = ExposureStream::new(plan);
    for e in events {
        stream.push(&e.as_ref());
    }
    stream.finish()
}

/// A run's verdict once its exposure is known: a valid run that no fault exposed is not
/// exposed; any other verdict stands (a violation or a deadlock happened whatever the faults
/// did).
pub fn with_exposure(verdict: Verdict, exposures: &Exposures) -> Verdict {
    match verdict {
        Verdict::Valid if !exposures.exposed() => Verdict::NotExposed,
        Verdict::Valid
        | Verdict::NotExposed
        | Verdict::Unknown
        | Verdict::Stuck
        | Verdict::Invalid => verdict,
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
