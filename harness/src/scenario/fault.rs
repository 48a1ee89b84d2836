//! What a scenario's faults are, in one place: each fault's name, label, history verb, and
//! which servers can take it (by their capabilities) or which need servers lockpick started.
//! Its `[[nemesis]]` fields are read in `file.rs`, its timed steps drawn in
//! `nemesis/schedule.rs`, and its effect carried out in `nemesis/execute.rs`.

use super::ms::MsRange;
use crate::server::ServerKind;
use lockpick_checker::history::F;
use serde::Serialize;

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

    /// The fault's label in comparisons and reports: its name with what distinguishes it.
    pub fn label(&self) -> String {
        match self {
            FaultKind::ClientPause { point, .. } | FaultKind::ClientCrash { point, .. } => {
                format!("{} {}", self.name(), point.name())
            }
            FaultKind::Latency { latency_ms, .. } => format!("latency {latency_ms} ms"),
            FaultKind::ClockJump { offset_ms, .. } | FaultKind::ClockStrobe { offset_ms, .. } => {
                format!("{} {offset_ms:+} ms", self.name())
            }
            FaultKind::ClockRate { rate_milli, .. } => {
                format!("{} x{}", self.name(), *rate_milli as f64 / 1000.0)
            }
            FaultKind::Partition { .. }
            | FaultKind::Isolate { .. }
            | FaultKind::NodePause { .. }
            | FaultKind::NodeCrash { .. } => self.name().to_owned(),
        }
    }

    /// The nemesis verb under which the history records the fault.
    pub fn verb(&self) -> F {
        match self {
            FaultKind::ClientPause { .. } => F::Pause,
            FaultKind::ClientCrash { .. } => F::Crash,
            FaultKind::Latency { .. } => F::Slow,
            FaultKind::Partition { .. } | FaultKind::Isolate { .. } => F::Partition,
            FaultKind::NodePause { .. } => F::Pause,
            FaultKind::NodeCrash { .. } => F::Crash,
            FaultKind::ClockJump { .. }
            | FaultKind::ClockRate { .. }
            | FaultKind::ClockStrobe { .. } => F::Clock,
        }
    }

    /// Why a server of kind `server` cannot take this fault, or `None` when it can. Client
    /// and network faults work on every server; process faults need signals, clock faults
    /// libfaketime, member isolation and faults on the leader a peer network.
    pub fn cannot_run_on(&self, server: &dyn ServerKind) -> Option<String> {
        let caps = server.capabilities();
        let (what, support) = match self {
            FaultKind::ClientPause { .. }
            | FaultKind::ClientCrash { .. }
            | FaultKind::Latency { .. }
            | FaultKind::Partition { .. } => return None,
            FaultKind::Isolate { .. } => ("it acts on cluster members", caps.peers),
            FaultKind::NodePause { targets, .. } | FaultKind::NodeCrash { targets, .. }
                if *targets == Targets::Leader =>
            {
                ("it acts on the cluster's leader", caps.peers)
            }
            FaultKind::NodePause { .. } | FaultKind::NodeCrash { .. } => {
                ("it signals server processes", caps.signals)
            }
            FaultKind::ClockJump { .. }
            | FaultKind::ClockRate { .. }
            | FaultKind::ClockStrobe { .. } => ("it moves clocks", caps.clock),
        };
        support.err().map(|why| {
            format!(
                "{} cannot run on server {:?} ({what}): {why}",
                self.name(),
                server.name()
            )
        })
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
