//! The TOML layout of a scenario file and its conversion into a checked [`Scenario`].

use super::client_table::ClientTable;
use super::error::{ScenarioError, Source};
use super::model::*;
use super::ms::MsRange;
use super::rules::{self, *};
use crate::client::{client_names, find_client, ClientKind};
use crate::locks::{find_lock, lock_names};
use crate::server::{find_server, server_names, ServerKind};
use lockpick_checker::verdict::Verdict;
use serde::Deserialize;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: Spanned<String>,
    description: Option<Spanned<String>>,
    expected: Option<Spanned<String>>,
    #[serde(default)]
    seed: u64,
    /// Shorthand for `[server]` + `[client]`: a named lock.
    backend: Option<Spanned<RawServer>>,
    server: Option<Spanned<RawServer>>,
    /// Read by the client kind named in it (see [`ClientTable`]); only its `kind` here.
    client: Option<Spanned<RawClientKind>>,
    #[serde(default)]
    lock: RawLock,
    workload: RawWorkload,
    #[serde(default)]
    resource: RawResource,
    #[serde(default)]
    check: RawCheck,
    #[serde(default)]
    nemesis: Vec<Spanned<RawFault>>,
}

/// `[server]`, or the `[backend]` shorthand, whose `kind` names a lock instead.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    kind: Spanned<String>,
    nodes: Option<Spanned<u64>>,
    persistence: Option<Spanned<String>>,
}

/// The `kind` of `[client]`; the other keys are the client kind's to read.
#[derive(Deserialize)]
struct RawClientKind {
    kind: Option<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawLock {
    name: Option<Spanned<String>>,
    ttl_ms: Option<Spanned<u64>>,
    acquire_timeout_ms: Option<Spanned<u64>>,
    retry_delay_ms: Option<Spanned<MsRange>>,
    op_timeout_ms: Option<Spanned<u64>>,
    #[serde(default)]
    watchdog: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkload {
    kind: Spanned<String>,
    clients: Spanned<u64>,
    duration_ms: Spanned<u64>,
    hold_ms: Option<Spanned<MsRange>>,
    think_ms: Option<Spanned<MsRange>>,
    /// Independent locks the clients share; each operation picks one from the seed.
    locks: Option<Spanned<u64>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawResource {
    mode: Option<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawCheck {
    property: Option<Spanned<String>>,
    deadlock_ms: Option<Spanned<u64>>,
}

/// Every field any fault may have; which are allowed depends on `fault`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFault {
    fault: Spanned<String>,
    at_ms: Option<Spanned<MsRange>>,
    every_ms: Option<Spanned<MsRange>>,
    count: Option<Spanned<u32>>,
    duration_ms: Option<Spanned<MsRange>>,
    point: Option<Spanned<String>>,
    client: Option<Spanned<u64>>,
    nodes: Option<Spanned<toml::Value>>,
    latency_ms: Option<Spanned<u64>>,
    jitter_ms: Option<Spanned<u64>>,
    offset_ms: Option<Spanned<i64>>,
    rate: Option<Spanned<f64>>,
    period_ms: Option<Spanned<u64>>,
}

impl RawFault {
    /// Names of the optional fields that are set, for "not allowed here" errors.
    fn set_fields(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        let mut put = |set: bool, name| {
            if set {
                v.push(name)
            }
        };
        put(self.duration_ms.is_some(), "duration_ms");
        put(self.point.is_some(), "point");
        put(self.client.is_some(), "client");
        put(self.nodes.is_some(), "nodes");
        put(self.latency_ms.is_some(), "latency_ms");
        put(self.jitter_ms.is_some(), "jitter_ms");
        put(self.offset_ms.is_some(), "offset_ms");
        put(self.rate.is_some(), "rate");
        put(self.period_ms.is_some(), "period_ms");
        v
    }
}

/// Picks `text` from `allowed`, or says what is allowed.
fn one_of<T: Copy>(
    src: &Source,
    field: &str,
    value: &Spanned<String>,
    allowed: &[(&str, T)],
) -> Result<T, ScenarioError> {
    allowed
        .iter()
        .find(|(name, _)| *name == value.get_ref())
        .map(|(_, v)| *v)
        .ok_or_else(|| {
            let names: Vec<&str> = allowed.iter().map(|(n, _)| *n).collect();
            src.error(
                value.span(),
                field,
                format!(
                    "unknown value {:?}; allowed: {}",
                    value.get_ref(),
                    names.join(", ")
                ),
            )
        })
}

/// Checks `lo <= value <= hi`.
pub(super) fn in_range(
    src: &Source,
    field: &str,
    value: &Spanned<u64>,
    lo: u64,
    hi: u64,
) -> Result<u64, ScenarioError> {
    let v = *value.get_ref();
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(src.error(
            value.span(),
            field,
            format!("{v} is out of range; allowed: {lo} to {hi}"),
        ))
    }
}

/// Checks that both ends of a millisecond range are within `lo..=hi`.
fn ms_in_range(
    src: &Source,
    field: &str,
    value: &Spanned<MsRange>,
    lo: u64,
    hi: u64,
) -> Result<MsRange, ScenarioError> {
    let v = *value.get_ref();
    if lo <= v.min && v.max <= hi {
        Ok(v)
    } else {
        Err(src.error(
            value.span(),
            field,
            format!("{v} is out of range; allowed: {lo} to {hi} ms"),
        ))
    }
}

/// Checks a scenario or lock name against [`rules::check_name`].
fn name_value(src: &Source, field: &str, value: &Spanned<String>) -> Result<String, ScenarioError> {
    rules::check_name(value.get_ref())
        .map(|()| value.get_ref().clone())
        .map_err(|why| src.error(value.span(), field, why))
}

pub(super) fn parse(src: &Source) -> Result<Scenario, ScenarioError> {
    let raw: RawScenario = toml::from_str(src.text).map_err(|e| src.toml_error(&e))?;
    // The name becomes the run's folder under the store and is printed: it must be a plain
    // file name that cannot climb out of the store, nest, or forge output.
    let name = name_value(src, "name", &raw.name)?;
    let description = match &raw.description {
        Some(d) => {
            rules::check_text(d.get_ref(), DESCRIPTION_MAX_CHARS)
                .map_err(|why| src.error(d.span(), "description", why))?;
            d.get_ref().clone()
        }
        None => String::new(),
    };
    if raw.nemesis.len() > MAX_FAULT_ENTRIES {
        let span = raw.nemesis[MAX_FAULT_ENTRIES].span();
        return Err(src.error(
            span,
            "nemesis",
            format!(
                "{} [[nemesis]] entries; allowed: at most {MAX_FAULT_ENTRIES} (use every_ms and count for a fault that recurs)",
                raw.nemesis.len()
            ),
        ));
    }

    let (server, client_kind, section) = server_and_client(src, &raw)?;
    let table = raw
        .backend
        .as_ref()
        .or(raw.server.as_ref())
        .map(|t| t.get_ref());
    let rule = node_rule(server, client_kind);
    let nodes = match table.and_then(|t| t.nodes.as_ref()) {
        Some(n) => {
            let field = format!("{section}.nodes");
            let v = in_range(src, &field, n, rule.min as u64, rule.max as u64)? as usize;
            if !rule.allows(v) {
                return Err(src.error(
                    n.span(),
                    &field,
                    format!(
                        "{v} members cannot always form a majority; allowed: {}",
                        (rule.min..=rule.max)
                            .filter(|n| rule.allows(*n))
                            .map(|n| n.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
            v
        }
        None => rule.default,
    };
    let persistence = match table.and_then(|t| t.persistence.as_ref()) {
        Some(p) => {
            let field = format!("{section}.persistence");
            let v = one_of(
                src,
                &field,
                p,
                &[
                    ("none", Persistence::None),
                    ("aof-always", Persistence::AofAlways),
                ],
            )?;
            if let Err(why) = server.persistence() {
                return Err(src.error(
                    p.span(),
                    &field,
                    format!("server {:?} cannot take it: {why}", server.name()),
                ));
            }
            v
        }
        None => Persistence::None,
    };
    let expected = raw
        .expected
        .as_ref()
        .map(|e| {
            one_of(
                src,
                "expected",
                e,
                &[
                    ("valid", Verdict::Valid),
                    ("invalid", Verdict::Invalid),
                    ("unknown", Verdict::Unknown),
                ],
            )
        })
        .transpose()?;

    let ttl_ms = raw
        .lock
        .ttl_ms
        .as_ref()
        .map(|v| in_range(src, "lock.ttl_ms", v, 10, 3_600_000))
        .transpose()?
        .unwrap_or(1000);
    let acquire_timeout_ms = raw
        .lock
        .acquire_timeout_ms
        .as_ref()
        .map(|v| in_range(src, "lock.acquire_timeout_ms", v, 1, 3_600_000))
        .transpose()?
        .unwrap_or(2000);
    let op_timeout_ms = raw
        .lock
        .op_timeout_ms
        .as_ref()
        .map(|v| in_range(src, "lock.op_timeout_ms", v, 1, 600_000))
        .transpose()?
        .unwrap_or(250);
    let lock_name = match &raw.lock.name {
        Some(n) => name_value(src, "lock.name", n)?,
        None => "lock".to_owned(),
    };
    let count = lock_count(src, &raw.workload, &lock_name, client_kind)?;
    let lock = LockSpec {
        // A ZooKeeper node, an etcd key and Redis keys are named after it.
        name: lock_name,
        count,
        ttl_ms,
        acquire_timeout_ms,
        retry_delay_ms: match &raw.lock.retry_delay_ms {
            Some(r) => ms_in_range(src, "lock.retry_delay_ms", r, 0, 60_000)?,
            None => MsRange { min: 5, max: 20 },
        },
        op_timeout_ms,
        watchdog: raw.lock.watchdog,
    };
    if let Err(e) = server.check_lock(&lock) {
        let span = match e.field {
            "lock.ttl_ms" => raw.lock.ttl_ms.as_ref().map(|v| v.span()),
            "lock.acquire_timeout_ms" => raw.lock.acquire_timeout_ms.as_ref().map(|v| v.span()),
            "lock.op_timeout_ms" => raw.lock.op_timeout_ms.as_ref().map(|v| v.span()),
            // Another field, or one left at its default: the line of the server's kind.
            _ => None,
        };
        let at = span.unwrap_or_else(|| table.map_or(0..0, |t| t.kind.span()));
        return Err(src.error(at, e.field, e.message));
    }
    let client = ClientSpec {
        kind: client_kind,
        options: client_kind.options(&ClientTable::new(src.clone(), raw.client.is_some()))?,
    };

    let workload = WorkloadSpec {
        kind: one_of(
            src,
            "workload.kind",
            &raw.workload.kind,
            &[
                ("fenced-write", WorkloadKind::FencedWrite),
                ("counter", WorkloadKind::Counter),
            ],
        )?,
        clients: in_range(
            src,
            "workload.clients",
            &raw.workload.clients,
            1,
            MAX_CLIENTS as u64,
        )? as usize,
        duration_ms: in_range(
            src,
            "workload.duration_ms",
            &raw.workload.duration_ms,
            1,
            MAX_RUN_MS,
        )?,
        hold_ms: match &raw.workload.hold_ms {
            Some(h) => ms_in_range(src, "workload.hold_ms", h, 0, MAX_FAULT_MS)?,
            None => MsRange::fixed(5),
        },
        think_ms: match &raw.workload.think_ms {
            Some(t) => ms_in_range(src, "workload.think_ms", t, 0, MAX_FAULT_MS)?,
            None => MsRange { min: 0, max: 20 },
        },
    };

    let resource = match &raw.resource.mode {
        Some(m) => one_of(
            src,
            "resource.mode",
            m,
            &[
                ("naive", ResourceMode::Naive),
                ("fenced", ResourceMode::Fenced),
            ],
        )?,
        None => ResourceMode::Naive,
    };
    let property = match &raw.check.property {
        Some(p) => one_of(
            src,
            "check.property",
            p,
            &[
                ("exclusive", Property::Exclusive),
                ("fenced", Property::Fenced),
            ],
        )?,
        None => Property::Exclusive,
    };
    let deadlock_ms = match &raw.check.deadlock_ms {
        Some(d) => in_range(src, "check.deadlock_ms", d, 1, MAX_RUN_MS)?,
        None => (3 * ttl_ms).max(3000),
    };

    let node_names: Vec<String> = (1..=nodes).map(|i| format!("n{i}")).collect();
    let mut faults = Vec::new();
    for f in &raw.nemesis {
        faults.push(fault(src, f, &node_names, workload.clients, server)?);
    }

    let scenario = Scenario {
        name,
        description,
        path: src.path.to_owned(),
        expected,
        seed: raw.seed,
        server,
        nodes,
        persistence,
        client,
        lock,
        workload,
        resource,
        property,
        deadlock_ms,
        nemesis: Nemesis { faults },
    };
    // The schedule is drawn whole before the run: a fault that recurs or flips too often
    // would fill memory before anything starts.
    if let Err((index, field, why)) =
        crate::nemesis::check_schedule_size(&scenario, scenario.workload.duration_ms)
    {
        let fault = raw.nemesis[index].get_ref();
        let span = match field {
            "nemesis.period_ms" => fault.period_ms.as_ref().map(Spanned::span),
            _ => fault.every_ms.as_ref().map(Spanned::span),
        }
        .unwrap_or_else(|| raw.nemesis[index].span());
        return Err(src.error(span, field, why));
    }
    Ok(scenario)
}

/// `[workload] locks`: how many, and only for a client kind that can pick a lock per
/// operation and a workload checked per lock; every name it makes must pass the name rule.
fn lock_count(
    src: &Source,
    workload: &RawWorkload,
    stem: &str,
    client: &dyn ClientKind,
) -> Result<usize, ScenarioError> {
    let Some(locks) = &workload.locks else {
        return Ok(1);
    };
    let count = in_range(src, "workload.locks", locks, 1, MAX_LOCKS as u64)? as usize;
    if count == 1 {
        return Ok(1);
    }
    let refuse = |why: String| Err(src.error(locks.span(), "workload.locks", why));
    if let Err(why) = client.many_locks() {
        return refuse(format!(
            "{count} locks: client {:?} takes one lock ({why}); allowed: 1",
            client.name()
        ));
    }
    if workload.kind.get_ref() == "counter" {
        return refuse(format!(
            "{count} locks: the counter workload has one counter, checked against one lock; allowed with counter: 1 (use fenced-write for many locks)"
        ));
    }
    let longest = super::model::lock_names_of(stem, count)
        .pop()
        .unwrap_or_default();
    if let Err(why) = rules::check_name(&longest) {
        return refuse(format!(
            "{count} locks named after lock.name {stem:?}: {why}"
        ));
    }
    Ok(count)
}

fn fault(
    src: &Source,
    spanned: &Spanned<RawFault>,
    node_names: &[String],
    clients: usize,
    server: &dyn ServerKind,
) -> Result<Fault, ScenarioError> {
    let f = spanned.get_ref();
    let line = src.line_of(spanned.span().start);
    let kind_name = f.fault.get_ref().as_str();
    let here = |field: &str, message: String| src.error(spanned.span(), field, message);
    let caps = server.capabilities();

    let allowed: &[&str] = match kind_name {
        "client-pause" => &["duration_ms", "point", "client"],
        "client-crash" => &["point", "client"],
        "latency" => &["duration_ms", "nodes", "latency_ms", "jitter_ms"],
        "partition" | "node-pause" | "node-crash" => &["duration_ms", "nodes"],
        "isolate" => &["duration_ms", "nodes"],
        "clock-jump" => &["duration_ms", "nodes", "offset_ms"],
        "clock-rate" => &["duration_ms", "nodes", "rate"],
        "clock-strobe" => &["duration_ms", "nodes", "offset_ms", "period_ms"],
        other => {
            return Err(src.error(
                f.fault.span(),
                "nemesis.fault",
                format!(
                    "unknown fault {other:?}; allowed: {}",
                    FaultKind::NAMES.join(", ")
                ),
            ))
        }
    };
    if let Some(extra) = f.set_fields().into_iter().find(|n| !allowed.contains(n)) {
        return Err(here(
            &format!("nemesis.{extra}"),
            format!(
                "not allowed for fault {kind_name:?}; allowed here: at_ms, every_ms, count, {}",
                allowed.join(", ")
            ),
        ));
    }
    let need_duration = || match &f.duration_ms {
        Some(d) => ms_in_range(src, "nemesis.duration_ms", d, 0, MAX_FAULT_MS),
        None => Err(here(
            "nemesis.duration_ms",
            format!("fault {kind_name:?} needs duration_ms (milliseconds or [min, max])"),
        )),
    };
    let need_offset = || match &f.offset_ms {
        Some(o) if o.get_ref().unsigned_abs() <= MAX_CLOCK_OFFSET_MS.unsigned_abs() => {
            Ok(*o.get_ref())
        }
        Some(o) => Err(src.error(
            o.span(),
            "nemesis.offset_ms",
            format!(
                "{} is out of range; allowed: -{MAX_CLOCK_OFFSET_MS} to {MAX_CLOCK_OFFSET_MS} ms",
                o.get_ref()
            ),
        )),
        None => Err(here(
            "nemesis.offset_ms",
            format!("fault {kind_name:?} needs offset_ms (milliseconds, negative: back)"),
        )),
    };
    let point = || -> Result<PausePoint, ScenarioError> {
        match &f.point {
            Some(p) => one_of(
                src,
                "nemesis.point",
                p,
                &[
                    ("after-acquire", PausePoint::AfterAcquire),
                    ("before-write", PausePoint::BeforeWrite),
                    ("before-release", PausePoint::BeforeRelease),
                ],
            ),
            None => Ok(PausePoint::AfterAcquire),
        }
    };
    let client = || -> Result<Option<usize>, ScenarioError> {
        f.client
            .as_ref()
            .map(|c| in_range(src, "nemesis.client", c, 0, clients as u64 - 1).map(|v| v as usize))
            .transpose()
    };
    // Faults on cluster members: they may name the leader, and hit one member unless told.
    let member_fault = kind_name == "isolate"
        || (caps.peers.is_ok() && matches!(kind_name, "node-pause" | "node-crash"));
    let targets = || -> Result<Targets, ScenarioError> {
        let Some(nodes) = &f.nodes else {
            return Ok(if member_fault {
                Targets::RandomOne
            } else {
                Targets::All
            });
        };
        let bad = |msg: String| src.error(nodes.span(), "nemesis.nodes", msg);
        let leader = if member_fault { "\"leader\", " } else { "" };
        let allowed = format!(
            "allowed: \"all\", \"random-one\", {leader}or a list of node names from {}",
            node_names.join(", ")
        );
        match nodes.get_ref() {
            // Cut off from nobody: an isolation of every member would change nothing.
            toml::Value::String(s) if s == "all" && kind_name == "isolate" => Err(bad(format!(
                "\"all\" isolates every member from nobody; {allowed}"
            ))),
            toml::Value::String(s) if s == "all" => Ok(Targets::All),
            toml::Value::String(s) if s == "random-one" => Ok(Targets::RandomOne),
            toml::Value::String(s) if s == "leader" && member_fault => Ok(Targets::Leader),
            toml::Value::Array(items) => {
                let mut names: Vec<String> = Vec::new();
                for item in items {
                    match item.as_str() {
                        // Twice in one fault would crash (or pause) one node twice at once.
                        Some(n) if names.iter().any(|k| k == n) => {
                            return Err(bad(format!(
                                "node {item} is listed twice; each node at most once"
                            )))
                        }
                        Some(n) if node_names.iter().any(|k| k == n) => names.push(n.to_owned()),
                        _ => return Err(bad(format!("unknown node {item}; {allowed}"))),
                    }
                }
                if names.is_empty() {
                    return Err(bad(format!("empty node list; {allowed}")));
                }
                Ok(Targets::Nodes(names))
            }
            other => Err(bad(format!("unknown value {other}; {allowed}"))),
        }
    };

    let kind = match kind_name {
        "client-pause" => FaultKind::ClientPause {
            point: point()?,
            duration: need_duration()?,
            client: client()?,
        },
        "client-crash" => FaultKind::ClientCrash {
            point: point()?,
            client: client()?,
        },
        "latency" => FaultKind::Latency {
            targets: targets()?,
            latency_ms: match &f.latency_ms {
                Some(l) => in_range(src, "nemesis.latency_ms", l, 0, MAX_LATENCY_MS)?,
                None => {
                    return Err(here(
                        "nemesis.latency_ms",
                        "fault \"latency\" needs latency_ms".to_owned(),
                    ))
                }
            },
            jitter_ms: match &f.jitter_ms {
                Some(j) => in_range(src, "nemesis.jitter_ms", j, 0, MAX_LATENCY_MS)?,
                None => 0,
            },
            duration: need_duration()?,
        },
        "isolate" => FaultKind::Isolate {
            targets: targets()?,
            duration: need_duration()?,
        },
        "node-pause" => FaultKind::NodePause {
            targets: targets()?,
            duration: need_duration()?,
        },
        "node-crash" => FaultKind::NodeCrash {
            targets: targets()?,
            duration: need_duration()?,
        },
        "clock-jump" => FaultKind::ClockJump {
            targets: targets()?,
            offset_ms: need_offset()?,
            duration: need_duration()?,
        },
        "clock-rate" => FaultKind::ClockRate {
            targets: targets()?,
            rate_milli: {
                let rate = f.rate.as_ref().ok_or_else(|| {
                    here(
                        "nemesis.rate",
                        "fault \"clock-rate\" needs rate (times real speed, e.g. 10 or 0.5)"
                            .to_owned(),
                    )
                })?;
                let r = *rate.get_ref();
                if !(0.001..=1000.0).contains(&r) {
                    return Err(src.error(
                        rate.span(),
                        "nemesis.rate",
                        format!("{r} is out of range; allowed: 0.001 to 1000"),
                    ));
                }
                (r * 1000.0).round() as u64
            },
            duration: need_duration()?,
        },
        "clock-strobe" => FaultKind::ClockStrobe {
            targets: targets()?,
            offset_ms: need_offset()?,
            period_ms: match &f.period_ms {
                Some(p) => in_range(
                    src,
                    "nemesis.period_ms",
                    p,
                    MIN_STROBE_PERIOD_MS,
                    MAX_FAULT_MS,
                )?,
                None => {
                    return Err(here(
                        "nemesis.period_ms",
                        "fault \"clock-strobe\" needs period_ms".to_owned(),
                    ))
                }
            },
            duration: need_duration()?,
        },
        _ => FaultKind::Partition {
            targets: targets()?,
            duration: need_duration()?,
        },
    };
    // What the server can take is the fault's to say, from the server's capabilities.
    if let Some(why) = kind.cannot_run_on(server) {
        return Err(src.error(f.fault.span(), "nemesis.fault", why));
    }
    let count = match &f.count {
        Some(c) if (1..=MAX_FAULT_COUNT).contains(c.get_ref()) => Some(*c.get_ref()),
        Some(c) => {
            return Err(src.error(
                c.span(),
                "nemesis.count",
                format!(
                "{} is out of range; allowed: 1 to {MAX_FAULT_COUNT} (0 would never run the fault)",
                c.get_ref()
            ),
            ))
        }
        None => None,
    };
    Ok(Fault {
        kind,
        at_ms: match &f.at_ms {
            Some(a) => ms_in_range(src, "nemesis.at_ms", a, 0, MAX_RUN_MS)?,
            None => MsRange::fixed(0),
        },
        every_ms: f
            .every_ms
            .as_ref()
            .map(|e| ms_in_range(src, "nemesis.every_ms", e, 1, MAX_RUN_MS))
            .transpose()?,
        count,
        line,
    })
}

/// The server and client kinds a scenario names, and the table its server settings are in
/// (`server`, or `backend` for the shorthand).
fn server_and_client(
    src: &Source,
    raw: &RawScenario,
) -> Result<
    (
        &'static dyn ServerKind,
        &'static dyn ClientKind,
        &'static str,
    ),
    ScenarioError,
> {
    let client_kind = raw
        .client
        .as_ref()
        .map(|c| (c.span(), c.get_ref().kind.as_ref()));
    match (&raw.backend, &raw.server) {
        (Some(b), Some(_)) => Err(src.error(
            b.span(),
            "backend",
            "[backend] is the shorthand for [server] with [client]; use one or the other",
        )),
        (None, None) => Err(src.error(
            0..0,
            "server",
            format!(
                "missing [server] (and [client]); server kinds: {}",
                server_names().join(", ")
            ),
        )),
        (Some(b), None) => {
            if let Some((span, _)) = client_kind {
                return Err(src.error(
                    span,
                    "client",
                    "[client] goes with [server]; [backend] names a lock, server and client at once",
                ));
            }
            let kind = &b.get_ref().kind;
            let lock = find_lock(kind.get_ref()).ok_or_else(|| {
                src.error(
                    kind.span(),
                    "backend.kind",
                    format!(
                        "unknown value {:?}; allowed: {}",
                        kind.get_ref(),
                        lock_names().join(", ")
                    ),
                )
            })?;
            Ok((lock.server_kind(), lock.client_kind(), "backend"))
        }
        (None, Some(s)) => {
            let kind = &s.get_ref().kind;
            let server = find_server(kind.get_ref()).ok_or_else(|| {
                src.error(
                    kind.span(),
                    "server.kind",
                    format!(
                        "unknown value {:?}; allowed: {}",
                        kind.get_ref(),
                        server_names().join(", ")
                    ),
                )
            })?;
            let client = match client_kind {
                None => {
                    return Err(src.error(
                        s.span(),
                        "client",
                        format!(
                            "missing [client] for server {:?}; client kinds: {}",
                            server.name(),
                            client_names().join(", ")
                        ),
                    ))
                }
                Some((span, None)) => {
                    return Err(src.error(
                        span,
                        "client.kind",
                        format!("missing; allowed: {}", client_names().join(", ")),
                    ))
                }
                Some((_, Some(name))) => name,
            };
            let kind = find_client(client.get_ref()).ok_or_else(|| {
                src.error(
                    client.span(),
                    "client.kind",
                    format!(
                        "unknown value {:?}; allowed: {}",
                        client.get_ref(),
                        client_names().join(", ")
                    ),
                )
            })?;
            if !kind.runs_on().allows(server) {
                return Err(src.error(
                    client.span(),
                    "client.kind",
                    format!(
                        "client {:?} does not run on server {:?}; it runs on: {}",
                        kind.name(),
                        server.name(),
                        kind.runs_on().describe()
                    ),
                ));
            }
            Ok((server, kind, "server"))
        }
    }
}
