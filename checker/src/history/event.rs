//! One history event, exactly as it is written to and read from `history.jsonl`.
//!
//! This file is the single definition of the history format. Every field is documented in
//! `docs/history-format.md`; change both together and bump [`FORMAT_VERSION`] when a reader of
//! the old format would misread the new one. The rules a reader enforces across lines (index
//! without gaps, time never decreasing, one operation in flight per process, the torn last
//! line) are in `read.rs` and `rules.rs`, and under "Reading rules" in the same page.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

/// The error of an acquire that was still waiting when the workload ended: lockpick cut it,
/// so it says nothing about the lock.
pub const RUN_ENDED: &str = "run-ended";

/// Version of the history format written by this build. Readers reject newer versions.
pub const FORMAT_VERSION: u32 = 2;

/// One line of `history.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Format version, [`FORMAT_VERSION`] when written by this build.
    pub v: u32,
    /// Position in the history, from 0, without gaps.
    pub index: u64,
    /// Nanoseconds since the run started, from a monotonic clock. Never decreases along the file.
    pub time_ns: u64,
    /// Who performed the operation: a client process or the nemesis.
    pub process: Process,
    /// `invoke`, `ok`, `fail` or `info`.
    #[serde(rename = "type")]
    pub kind: EventKind,
    /// What was done.
    pub f: F,
    /// The lock the operation is about, when it is about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<String>,
    /// The operation's arguments (on invoke) or results (on completion).
    #[serde(default, skip_serializing_if = "Value::is_empty")]
    pub value: Value,
    /// Why an operation failed or its outcome is unknown, in a few words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Who performed an operation. Written as an integer for clients and `"nemesis"` for faults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Process {
    /// A client process. A process whose operation ended in `info` is retired; its logical
    /// client continues under a fresh id.
    Client(u64),
    /// The fault injector.
    Nemesis,
}

impl Process {
    /// The client id, or `None` for the nemesis.
    pub fn client(self) -> Option<u64> {
        match self {
            Process::Client(id) => Some(id),
            Process::Nemesis => None,
        }
    }
}

impl fmt::Display for Process {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Process::Client(id) => write!(f, "{id}"),
            Process::Nemesis => f.write_str("nemesis"),
        }
    }
}

impl Serialize for Process {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Process::Client(id) => s.serialize_u64(*id),
            Process::Nemesis => s.serialize_str("nemesis"),
        }
    }
}

impl<'de> Deserialize<'de> for Process {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Process;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a client process number or \"nemesis\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Process, E> {
                Ok(Process::Client(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Process, E> {
                u64::try_from(v)
                    .map(Process::Client)
                    .map_err(|_| E::custom("process number must not be negative"))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Process, E> {
                if v == "nemesis" {
                    Ok(Process::Nemesis)
                } else {
                    Err(E::custom(format!("unknown process {v:?}")))
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// Jepsen's three-valued outcome, plus the invocation that precedes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EventKind {
    /// The operation started.
    Invoke,
    /// It happened.
    Ok,
    /// It definitely did not happen.
    Fail,
    /// Unknown: it may or may not have happened (timeout, broken connection). For a client
    /// this retires the process. The nemesis uses `info` for every fault it applies.
    Info,
}

/// What an event does. Client operations first, then the nemesis's fault verbs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum F {
    /// Take the lock.
    Acquire,
    /// Give the lock back.
    Release,
    /// Extend the lock's lease (watchdog or explicit extend).
    Renew,
    /// Write to the protected resource, or to a register.
    Write,
    /// Read the protected resource, or a register.
    Read,
    /// Compare-and-set on a register.
    Cas,
    /// What the lock library told the holder, unasked, as it happened (a v2 adapter's event
    /// line: `value.event` is `lost`, `suspended` or `reconnected`). Always `type: "info"`, a
    /// point in time: neither an operation nor a retirement of the process (format version 2).
    Notice,
    /// Nemesis: cut the network to the named nodes.
    Partition,
    /// Nemesis: slow the network to the named nodes (latency and jitter).
    Slow,
    /// Nemesis: remove every network fault from the named nodes.
    Heal,
    /// Nemesis: stop a client (a GC pause) or a node (SIGSTOP).
    Pause,
    /// Nemesis: let a paused client or node go on.
    Resume,
    /// Nemesis: kill a client or a node without giving it a chance to clean up.
    Crash,
    /// Nemesis: start a crashed node again.
    Restart,
    /// Nemesis: move the wall clock of the named nodes (jump by `offset_ms`, and/or run at a
    /// rate given in `note`).
    Clock,
    /// Nemesis: put the named nodes' clocks back to real time.
    ClockReset,
    /// Nemesis: the primary (first of `nodes`) killed, the replica (second) promoted, and the
    /// clients' address pointed at it. Not healed: the old primary stays down.
    Failover,
}

impl F {
    /// Every verb, clients' first.
    pub const ALL: [F; 17] = [
        F::Acquire,
        F::Release,
        F::Renew,
        F::Write,
        F::Read,
        F::Cas,
        F::Notice,
        F::Partition,
        F::Slow,
        F::Heal,
        F::Pause,
        F::Resume,
        F::Crash,
        F::Restart,
        F::Clock,
        F::ClockReset,
        F::Failover,
    ];

    /// The name as written in the history.
    pub fn name(self) -> &'static str {
        match self {
            F::Acquire => "acquire",
            F::Release => "release",
            F::Renew => "renew",
            F::Write => "write",
            F::Read => "read",
            F::Cas => "cas",
            F::Notice => "notice",
            F::Partition => "partition",
            F::Slow => "slow",
            F::Heal => "heal",
            F::Pause => "pause",
            F::Resume => "resume",
            F::Crash => "crash",
            F::Restart => "restart",
            F::Clock => "clock",
            F::ClockReset => "clock-reset",
            F::Failover => "failover",
        }
    }
}

impl fmt::Display for F {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An operation's arguments or results. Every field is optional; which ones an event carries
/// depends on its `f` and `type` (see `docs/history-format.md`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Value {
    /// Fencing token: granted with the lock on `acquire ok`, sent with a `write`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<u64>,
    /// Highest token the resource had accepted before this write (on `write ok`, and on a
    /// `write fail` "stale-token" rejection); absent for the first write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_token: Option<u64>,
    /// Lease length asked for on acquire or renew, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_ms: Option<u64>,
    /// On `acquire ok` from a built-in recipe where one request decides the grant (Redis,
    /// Redlock, PostgreSQL, MariaDB): when the request the lock granted was sent, on this
    /// history's clock (`time_ns`). The lock cannot have granted before it, and the lease it
    /// set runs at least until then plus the lease. Absent where the grant came of waiting
    /// (etcd, ZooKeeper) and for an adapter, whose library's requests lockpick does not see.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_ns: Option<u64>,
    /// The value identifying this holder inside the lock (random per acquire).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder: Option<String>,
    /// On `acquire ok` from an adapter whose library says it: the value by which the lock's
    /// server knows this holder (Redisson's `<uuid>:<threadId>` hash field, an etcd lease),
    /// which the server's own record shows. lockpick's recipes store `holder` itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Integer payload: the counter value read or written, or a register value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub int: Option<i64>,
    /// Compare-and-set: the value expected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<i64>,
    /// Compare-and-set: the value to set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<i64>,
    /// Nemesis: the nodes a fault applies to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<String>,
    /// Nemesis: the client process a fault applies to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<u64>,
    /// Nemesis: where in its operation a client is paused (`after-acquire`, `before-write`,
    /// `before-release`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point: Option<String>,
    /// Nemesis: how long a pause or a fault lasts, or the added latency, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms: Option<u64>,
    /// Nemesis: latency jitter in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter_ms: Option<u64>,
    /// Redlock: each master's answer to the last try of an acquire, by node name: `ok`,
    /// `taken` (held by someone else), `fail: …` (definitely not set), `info: …` (unknown).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub per_node: BTreeMap<String, String>,
    /// Redlock: validity left after the last try of an acquire (TTL − elapsed − drift), in
    /// milliseconds; 0 when none was left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validity_ms: Option<u64>,
    /// `redis-sentinel` with `WAIT`: how many replicas acknowledged the grant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas_acked: Option<u64>,
    /// Nemesis `clock`: the nodes' clock offset from real time, in milliseconds (negative:
    /// behind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_ms: Option<i64>,
    /// `notice`: what the library told the holder (`lost`, `suspended`, `reconnected`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// Free-form detail for a human reader. The one value checkers read is `"final"`, marking
    /// the counter read made after the workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Value {
    /// True when no field is set, so the event is written without a `value`.
    pub fn is_empty(&self) -> bool {
        *self == Value::default()
    }
}

/// One line of `history.jsonl` read without copying its strings: the same fields and types as
/// [`Event`] (so a line that parses as one parses as the other), for the streaming readers that
/// look at every line once and keep little. [`EventRef::to_owned`] gives the [`Event`].
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct EventRef<'a> {
    pub v: u32,
    pub index: u64,
    pub time_ns: u64,
    pub process: Process,
    #[serde(rename = "type")]
    pub kind: EventKind,
    pub f: F,
    #[serde(default, borrow)]
    pub lock: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub value: ValueRef<'a>,
    #[serde(default, borrow)]
    pub error: Option<Cow<'a, str>>,
}

/// [`Value`] without copying its strings; see [`EventRef`].
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ValueRef<'a> {
    #[serde(default)]
    pub token: Option<u64>,
    #[serde(default)]
    pub max_token: Option<u64>,
    #[serde(default)]
    pub lease_ms: Option<u64>,
    #[serde(default)]
    pub sent_ns: Option<u64>,
    #[serde(default, borrow)]
    pub holder: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub owner: Option<Cow<'a, str>>,
    #[serde(default)]
    pub int: Option<i64>,
    #[serde(default)]
    pub from: Option<i64>,
    #[serde(default)]
    pub to: Option<i64>,
    #[serde(default, borrow)]
    pub nodes: Vec<Cow<'a, str>>,
    #[serde(default)]
    pub client: Option<u64>,
    #[serde(default, borrow)]
    pub point: Option<Cow<'a, str>>,
    #[serde(default)]
    pub ms: Option<u64>,
    #[serde(default)]
    pub jitter_ms: Option<u64>,
    #[serde(default, borrow)]
    pub per_node: BTreeMap<Cow<'a, str>, Cow<'a, str>>,
    #[serde(default)]
    pub validity_ms: Option<u64>,
    #[serde(default)]
    pub replicas_acked: Option<u64>,
    #[serde(default)]
    pub offset_ms: Option<i64>,
    #[serde(default, borrow)]
    pub event: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub note: Option<Cow<'a, str>>,
}

impl Event {
    /// The event as the streaming readers see it, borrowing its strings.
    pub fn as_ref(&self) -> EventRef<'_> {
        fn b(s: &Option<String>) -> Option<Cow<'_, str>> {
            s.as_deref().map(Cow::Borrowed)
        }
        let v = &self.value;
        EventRef {
            v: self.v,
            index: self.index,
            time_ns: self.time_ns,
            process: self.process,
            kind: self.kind,
            f: self.f,
            lock: b(&self.lock),
            value: ValueRef {
                token: v.token,
                max_token: v.max_token,
                lease_ms: v.lease_ms,
                sent_ns: v.sent_ns,
                holder: b(&v.holder),
                owner: b(&v.owner),
                int: v.int,
                from: v.from,
                to: v.to,
                nodes: v.nodes.iter().map(|n| Cow::Borrowed(n.as_str())).collect(),
                client: v.client,
                point: b(&v.point),
                ms: v.ms,
                jitter_ms: v.jitter_ms,
                per_node: v
                    .per_node
                    .iter()
                    .map(|(k, x)| (Cow::Borrowed(k.as_str()), Cow::Borrowed(x.as_str())))
                    .collect(),
                validity_ms: v.validity_ms,
                replicas_acked: v.replicas_acked,
                offset_ms: v.offset_ms,
                event: b(&v.event),
                note: b(&v.note),
            },
            error: b(&self.error),
        }
    }
}

impl EventRef<'_> {
    /// The owned event.
    pub fn to_owned(&self) -> Event {
        let own = |s: &Option<Cow<'_, str>>| s.as_deref().map(str::to_string);
        let v = &self.value;
        Event {
            v: self.v,
            index: self.index,
            time_ns: self.time_ns,
            process: self.process,
            kind: self.kind,
            f: self.f,
            lock: own(&self.lock),
            value: Value {
                token: v.token,
                max_token: v.max_token,
                lease_ms: v.lease_ms,
                sent_ns: v.sent_ns,
                holder: own(&v.holder),
                owner: own(&v.owner),
                int: v.int,
                from: v.from,
                to: v.to,
                nodes: v.nodes.iter().map(|n| n.to_string()).collect(),
                client: v.client,
                point: own(&v.point),
                ms: v.ms,
                jitter_ms: v.jitter_ms,
                per_node: v
                    .per_node
                    .iter()
                    .map(|(k, x)| (k.to_string(), x.to_string()))
                    .collect(),
                validity_ms: v.validity_ms,
                replicas_acked: v.replicas_acked,
                offset_ms: v.offset_ms,
                event: own(&v.event),
                note: own(&v.note),
            },
            error: own(&self.error),
        }
    }

    /// The lock named, or "" when none is.
    pub fn lock_name(&self) -> &str {
        self.lock.as_deref().unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_and_nemesis_processes_round_trip() {
        let e = Event {
            v: FORMAT_VERSION,
            index: 3,
            time_ns: 42,
            process: Process::Client(7),
            kind: EventKind::Ok,
            f: F::Acquire,
            lock: Some("l".into()),
            value: Value {
                token: Some(9),
                ..Value::default()
            },
            error: None,
        };
        let line = serde_json::to_string(&e).unwrap();
        assert_eq!(
            line,
            r#"{"v":2,"index":3,"time_ns":42,"process":7,"type":"ok","f":"acquire","lock":"l","value":{"token":9}}"#
        );
        assert_eq!(serde_json::from_str::<Event>(&line).unwrap(), e);

        let n = Event {
            process: Process::Nemesis,
            kind: EventKind::Info,
            f: F::Partition,
            lock: None,
            value: Value::default(),
            ..e
        };
        let line = serde_json::to_string(&n).unwrap();
        assert!(line.contains(r#""process":"nemesis""#), "{line}");
        assert!(!line.contains("value"), "{line}");
        assert_eq!(serde_json::from_str::<Event>(&line).unwrap(), n);
    }

    #[test]
    fn unknown_process_name_is_an_error() {
        let line = r#"{"v":1,"index":0,"time_ns":0,"process":"bob","type":"ok","f":"read"}"#;
        let err = serde_json::from_str::<Event>(line).unwrap_err().to_string();
        assert!(err.contains("unknown process"), "{err}");
    }
}
