//! The validated scenario a run is built from.

use super::ms::MsRange;
pub use lockpick_checker::lock::Property;
use lockpick_checker::verdict::Verdict;
use serde::Serialize;
use std::path::PathBuf;

/// A scenario, checked and ready to run.
#[derive(Debug, Clone, Serialize)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    /// The file it was read from.
    pub path: PathBuf,
    /// The verdict this scenario is meant to reach, if it declares one.
    pub expected: Option<Verdict>,
    /// Seed of every random choice in the run; `--seed` overrides it.
    pub seed: u64,
    pub backend: BackendKind,
    /// How many lock nodes the backend runs (named `n1`, `n2`, …).
    pub nodes: usize,
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
    /// Names of the lock nodes, `n1` … `nN`.
    pub fn node_names(&self) -> Vec<String> {
        (1..=self.nodes).map(|i| format!("n{i}")).collect()
    }
}

/// The tick of the ZooKeeper servers lockpick runs: session timeouts (the lock's TTL) may be
/// 2 to 20 ticks.
pub const ZK_TICK_MS: u64 = 250;

/// Which lock implementation the clients use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BackendKind {
    /// `SETNX` then `DEL`: no TTL, no owner check.
    RedisNaive,
    /// `SET NX PX` with a random value, compare-and-delete release, fencing token from `INCR`.
    Redis,
    /// etcd's mutex recipe on a three-member etcd cluster: lease + keep-alive, owner = lowest
    /// create revision, token = create revision.
    Etcd,
    /// ZooKeeper's lock recipe on a three-server ensemble: ephemeral sequential nodes, the
    /// lowest holds, the session (timeout = the lock's TTL) is the lease, token = sequence.
    ZooKeeper,
}

impl BackendKind {
    pub const NAMES: &'static [&'static str] = &["redis", "redis-naive", "etcd", "zookeeper"];

    pub fn name(self) -> &'static str {
        match self {
            BackendKind::RedisNaive => "redis-naive",
            BackendKind::Redis => "redis",
            BackendKind::Etcd => "etcd",
            BackendKind::ZooKeeper => "zookeeper",
        }
    }

    /// Whether the backend is a consensus cluster whose members talk to each other (so
    /// member faults and peer partitions apply).
    pub fn is_cluster(self) -> bool {
        matches!(self, BackendKind::Etcd | BackendKind::ZooKeeper)
    }

    /// Why a clock fault cannot be injected into this backend, if it cannot.
    pub fn clock_fault_refusal(self) -> Option<&'static str> {
        match self {
            // libfaketime works by preloading into libc's time calls; Go reads the clock
            // through vDSO/raw syscalls and is statically linked against its own runtime.
            BackendKind::Etcd => {
                Some("etcd is a Go binary, which ignores libfaketime: its clock cannot be skewed")
            }
            _ => None,
        }
    }

    /// The backend of that name, as a scenario file writes it.
    pub fn from_name(name: &str) -> Option<BackendKind> {
        [
            BackendKind::Redis,
            BackendKind::RedisNaive,
            BackendKind::Etcd,
            BackendKind::ZooKeeper,
        ]
        .into_iter()
        .find(|k| k.name() == name)
    }

    /// Why this backend cannot take `fault`, or `None` when it can. A comparison runs the
    /// other faults and shows this one as skipped with the reason.
    pub fn cannot_take(self, fault: &FaultKind) -> Option<String> {
        let member_fault = matches!(
            fault,
            FaultKind::Isolate { .. }
                | FaultKind::MemberPause { .. }
                | FaultKind::MemberKill { .. }
        );
        (member_fault && !self.is_cluster()).then(|| {
            format!(
                "{} acts on cluster members; {} is a single server",
                fault.name(),
                self.name()
            )
        })
    }
}

/// A fault left out when a scenario runs on a backend that cannot take it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedFault {
    /// Position of the fault in the scenario's `[[nemesis]]` list.
    pub index: usize,
    pub reason: String,
}

impl Scenario {
    /// This scenario on `backend`: the same workload, seed and faults, minus the faults the
    /// backend cannot take, which are returned with the reason. The expected verdict is kept
    /// only for the scenario's own backend: it was promised for that one.
    pub fn on_backend(&self, backend: BackendKind) -> (Scenario, Vec<SkippedFault>) {
        let mut s = self.clone();
        if backend != self.backend {
            s.expected = None;
        }
        s.backend = backend;
        let mut skipped = Vec::new();
        let mut index = 0;
        s.nemesis.faults.retain(|f| {
            let reason = backend.cannot_take(&f.kind);
            if let Some(reason) = reason.clone() {
                skipped.push(SkippedFault { index, reason });
            }
            index += 1;
            reason.is_none()
        });
        (s, skipped)
    }
}

/// Lock parameters.
#[derive(Debug, Clone, Serialize)]
pub struct LockSpec {
    pub name: String,
    /// Lease length; ignored by locks without one (`redis-naive`).
    pub ttl_ms: u64,
    /// How long one acquire keeps retrying before it definitely fails.
    pub acquire_timeout_ms: u64,
    /// Pause between tries of one acquire.
    pub retry_delay_ms: MsRange,
    /// Time limit of one request to a node; past it the outcome is unknown.
    pub op_timeout_ms: u64,
    /// Renew the lease every ttl/3 while holding.
    pub watchdog: bool,
}

/// What clients do while they hold the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadKind {
    /// acquire → write(token) → release.
    FencedWrite,
    /// acquire → read → write(read + 1) → release; broken exclusion shows as lost increments.
    Counter,
}

/// The client workload.
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadSpec {
    pub kind: WorkloadKind,
    pub clients: usize,
    pub duration_ms: u64,
    /// Time spent holding the lock between the write and the release.
    pub hold_ms: MsRange,
    /// Time between a release and the next acquire.
    pub think_ms: MsRange,
}

/// How the protected resource treats writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResourceMode {
    /// Accepts every write.
    Naive,
    /// Rejects a write whose token is lower than the highest it accepted.
    Fenced,
}

/// The fault schedule.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Nemesis {
    pub faults: Vec<Fault>,
}

/// One scheduled fault, possibly recurring.
#[derive(Debug, Clone, Serialize)]
pub struct Fault {
    pub kind: FaultKind,
    /// When it first starts, from the start of the workload.
    pub at_ms: MsRange,
    /// If set, it starts again this long after each start.
    pub every_ms: Option<MsRange>,
    /// How many times at most (default: once, or until the run ends when `every_ms` is set).
    pub count: Option<u32>,
    /// Line of the `[[nemesis]]` table, for messages.
    pub line: usize,
}

/// Where a paused or crashed client stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PausePoint {
    /// Right after the acquire succeeded.
    AfterAcquire,
    /// After the client checked it still holds the lock, just before it writes.
    BeforeWrite,
    /// Just before the release.
    BeforeRelease,
}

impl PausePoint {
    pub const NAMES: &'static [&'static str] = &["after-acquire", "before-write", "before-release"];

    pub fn name(self) -> &'static str {
        match self {
            PausePoint::AfterAcquire => "after-acquire",
            PausePoint::BeforeWrite => "before-write",
            PausePoint::BeforeRelease => "before-release",
        }
    }
}

/// Which nodes a network fault hits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Targets {
    All,
    /// One node chosen with the seed each time the fault starts.
    RandomOne,
    Nodes(Vec<String>),
    /// The member that leads the cluster when the fault starts (cluster backends only).
    Leader,
}

/// The fault itself.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    /// Stop one client (a stop-the-world GC pause) at `point` for `duration`.
    ClientPause {
        point: PausePoint,
        duration: MsRange,
        /// Which client (its index, from 0); random if absent.
        client: Option<usize>,
    },
    /// Kill one client at `point`: it never releases what it holds.
    ClientCrash {
        point: PausePoint,
        client: Option<usize>,
    },
    /// Latency (+ jitter) on the links to the target nodes.
    Latency {
        targets: Targets,
        latency_ms: u64,
        jitter_ms: u64,
        duration: MsRange,
    },
    /// Cut the links to the target nodes.
    Partition { targets: Targets, duration: MsRange },
    /// Cut the peer links between the target members and the other members (a minority or
    /// majority split); clients still reach every member. Cluster backends only.
    Isolate { targets: Targets, duration: MsRange },
    /// SIGSTOP the target members, SIGCONT after `duration`. Cluster backends only.
    MemberPause { targets: Targets, duration: MsRange },
    /// SIGKILL the target members, restart them after `duration`. Cluster backends only.
    MemberKill { targets: Targets, duration: MsRange },
}

impl FaultKind {
    /// The name as a scenario file writes it.
    pub fn name(&self) -> &'static str {
        match self {
            FaultKind::ClientPause { .. } => "client-pause",
            FaultKind::ClientCrash { .. } => "client-crash",
            FaultKind::Latency { .. } => "latency",
            FaultKind::Partition { .. } => "partition",
            FaultKind::Isolate { .. } => "isolate",
            FaultKind::MemberPause { .. } => "member-pause",
            FaultKind::MemberKill { .. } => "member-kill",
        }
    }

    pub const NAMES: &'static [&'static str] = &[
        "client-pause",
        "client-crash",
        "latency",
        "partition",
        "isolate",
        "member-pause",
        "member-kill",
    ];
}
