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
    /// What the lock nodes keep across a crash.
    pub persistence: Persistence,
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
    /// client address of each node in node order (`--external`): the backend must be one whose
    /// clients need nothing but those addresses, there must be one per node, and every fault
    /// must be one that works through the proxies or on clients. The error reads after
    /// "failed to".
    pub fn check_external(&self, addrs: &[std::net::SocketAddr]) -> Result<(), String> {
        if self.backend == BackendKind::RedisSentinel {
            return Err(format!(
                "run {} on external servers: the redis-sentinel backend needs sentinels and replicas lockpick starts",
                self.name
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
            if let Some(why) = fault.kind.needs_own_nodes() {
                return Err(format!(
                    "run {} on external servers: fault {} ({}) cannot run there: {why}; allowed with --external: client-pause, client-crash, latency, partition",
                    self.name,
                    i + 1,
                    fault.kind.name()
                ));
            }
        }
        Ok(())
    }

    /// Whether any fault moves a node's clock, so the nodes must run under libfaketime.
    pub fn has_clock_faults(&self) -> bool {
        self.nemesis.faults.iter().any(|f| {
            matches!(
                f.kind,
                FaultKind::ClockJump { .. }
                    | FaultKind::ClockRate { .. }
                    | FaultKind::ClockStrobe { .. }
            )
        })
    }

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
    /// Redlock over N independent masters (default 5): majority, validity, no fencing token.
    Redlock,
    /// The `redis` lock on a master (`n1`) with asynchronous replicas (`n2`…), found through
    /// three Sentinels that fail over to a replica when the master is down.
    RedisSentinel,
}

impl BackendKind {
    pub const NAMES: &'static [&'static str] = &[
        "redis",
        "redis-naive",
        "etcd",
        "zookeeper",
        "redlock",
        "redis-sentinel",
    ];

    pub fn name(self) -> &'static str {
        match self {
            BackendKind::RedisNaive => "redis-naive",
            BackendKind::Redis => "redis",
            BackendKind::Etcd => "etcd",
            BackendKind::ZooKeeper => "zookeeper",
            BackendKind::Redlock => "redlock",
            BackendKind::RedisSentinel => "redis-sentinel",
        }
    }

    /// Whether the backend is a consensus cluster whose members talk to each other (so
    /// member isolation, peer partitions and leader faults apply).
    pub fn is_cluster(self) -> bool {
        matches!(self, BackendKind::Etcd | BackendKind::ZooKeeper)
    }

    /// Whether the nodes of this backend can take clock faults (they run under libfaketime);
    /// `Err` says why not. A Go server (etcd) ignores libfaketime: its arm must say so.
    pub fn clock_faults(self) -> Result<(), &'static str> {
        match self {
            BackendKind::RedisNaive | BackendKind::Redis | BackendKind::Redlock => Ok(()),
            BackendKind::RedisSentinel => Err(
                "its master, replicas and sentinels do not run under libfaketime (a sentinel's \
                 failure detector would see a clock jump as a fault of its own)",
            ),
            // libfaketime works by preloading into libc's time calls; Go reads the clock
            // through vDSO/raw syscalls and is statically linked against its own runtime.
            BackendKind::Etcd => {
                Err("etcd is a Go binary, which ignores libfaketime: its clock cannot be skewed")
            }
            BackendKind::ZooKeeper => Err("its servers do not run under libfaketime"),
        }
    }

    /// The backend of that name, as a scenario file writes it.
    pub fn from_name(name: &str) -> Option<BackendKind> {
        [
            BackendKind::Redis,
            BackendKind::RedisNaive,
            BackendKind::Etcd,
            BackendKind::ZooKeeper,
            BackendKind::Redlock,
            BackendKind::RedisSentinel,
        ]
        .into_iter()
        .find(|k| k.name() == name)
    }

    /// Why this backend cannot take `fault`, or `None` when it can. A comparison runs the
    /// other faults and shows this one as skipped with the reason.
    pub fn cannot_take(self, fault: &FaultKind) -> Option<String> {
        // Client, network and process faults work on every backend; member isolation and
        // faults on the leader need a cluster; clock faults need nodes that run under
        // libfaketime.
        let cluster_only = match fault {
            FaultKind::Isolate { .. } => true,
            FaultKind::NodePause { targets, .. } | FaultKind::NodeCrash { targets, .. } => {
                *targets == Targets::Leader
            }
            _ => false,
        };
        if cluster_only && !self.is_cluster() {
            return Some(format!(
                "{} acts on cluster members; {} is not a cluster",
                fault.name(),
                self.name()
            ));
        }
        match fault {
            FaultKind::ClockJump { .. }
            | FaultKind::ClockRate { .. }
            | FaultKind::ClockStrobe { .. } => self.clock_faults().err().map(str::to_owned),
            _ => None,
        }
    }
}

/// What a Redis lock node keeps across a crash (`[backend] persistence`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Persistence {
    /// Nothing: a restarted node comes back empty.
    #[default]
    None,
    /// Append-only file with `appendfsync always`: every acknowledged write survives.
    AofAlways,
}

impl Persistence {
    pub const NAMES: &'static [&'static str] = &["none", "aof-always"];
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
    /// `redis-sentinel`: `WAIT` for replicas after each grant.
    pub wait: Option<WaitSpec>,
}

/// `WAIT replicas timeout_ms` after a grant (`[lock] wait_replicas`, `wait_timeout_ms`,
/// `wait_release`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WaitSpec {
    pub replicas: u64,
    pub timeout_ms: u64,
    /// Give the lock back (and fail the acquire) when fewer replicas acknowledged, as
    /// Redisson does.
    pub release_unacked: bool,
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
    /// Stop the target nodes' processes (SIGSTOP) for `duration`, then SIGCONT. On a cluster
    /// the target may be the leader.
    NodePause { targets: Targets, duration: MsRange },
    /// Kill the target nodes' processes (SIGKILL) and start them again after `duration`
    /// (0: at once; at least the max TTL: antirez's delayed restart). On a cluster the target
    /// may be the leader.
    NodeCrash { targets: Targets, duration: MsRange },
    /// Jump the target nodes' wall clocks by `offset_ms` (negative: back) for `duration`.
    ClockJump {
        targets: Targets,
        offset_ms: i64,
        duration: MsRange,
    },
    /// Run the target nodes' clocks at `rate_milli / 1000` times real speed for `duration`.
    ClockRate {
        targets: Targets,
        rate_milli: u64,
        duration: MsRange,
    },
    /// Flip the target nodes' clocks between `offset_ms` and real time every `period_ms`, for
    /// `duration`.
    ClockStrobe {
        targets: Targets,
        offset_ms: i64,
        period_ms: u64,
        duration: MsRange,
    },
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
            FaultKind::NodePause { .. } => "node-pause",
            FaultKind::NodeCrash { .. } => "node-crash",
            FaultKind::ClockJump { .. } => "clock-jump",
            FaultKind::ClockRate { .. } => "clock-rate",
            FaultKind::ClockStrobe { .. } => "clock-strobe",
        }
    }

    /// Why this fault cannot run on servers lockpick did not start (`--external`), if it
    /// cannot: it acts on their processes or clocks, or on peer links and leaders that only a
    /// cluster lockpick started exposes. Network faults on client links and client faults can.
    pub fn needs_own_nodes(&self) -> Option<&'static str> {
        match self {
            FaultKind::ClientPause { .. } | FaultKind::ClientCrash { .. } => None,
            FaultKind::Latency { targets, .. } | FaultKind::Partition { targets, .. } => {
                (*targets == Targets::Leader)
                    .then_some("finding the leader needs a cluster lockpick started")
            }
            FaultKind::Isolate { .. } => Some("it cuts peer links, which run through lockpick's proxies only in a cluster lockpick started"),
            FaultKind::NodePause { .. } | FaultKind::NodeCrash { .. } => {
                Some("it signals server processes, which lockpick did not start")
            }
            FaultKind::ClockJump { .. }
            | FaultKind::ClockRate { .. }
            | FaultKind::ClockStrobe { .. } => {
                Some("it moves clocks through libfaketime, under which lockpick starts its own servers")
            }
        }
    }

    pub const NAMES: &'static [&'static str] = &[
        "client-pause",
        "client-crash",
        "latency",
        "partition",
        "isolate",
        "node-pause",
        "node-crash",
        "clock-jump",
        "clock-rate",
        "clock-strobe",
    ];
}
