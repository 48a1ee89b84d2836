//! The TOML layout of a scenario file and its conversion into a checked [`Scenario`].

use super::client_table::ClientTable;
use super::error::{ScenarioError, Source};
use super::model::*;
use super::ms::MsRange;
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
    #[serde(default)]
    description: String,
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
    name: Option<String>,
    ttl_ms: Option<Spanned<u64>>,
    acquire_timeout_ms: Option<Spanned<u64>>,
    retry_delay_ms: Option<MsRange>,
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
    hold_ms: Option<MsRange>,
    think_ms: Option<MsRange>,
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
    at_ms: Option<MsRange>,
    every_ms: Option<MsRange>,
    count: Option<u32>,
    duration_ms: Option<MsRange>,
    point: Option<Spanned<String>>,
    client: Option<Spanned<u64>>,
    nodes: Option<Spanned<toml::Value>>,
    latency_ms: Option<u64>,
    jitter_ms: Option<u64>,
    offset_ms: Option<i64>,
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
fn in_range(
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

pub(super) fn parse(src: &Source) -> Result<Scenario, ScenarioError> {
    let raw: RawScenario = toml::from_str(src.text).map_err(|e| src.toml_error(&e))?;

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
    let lock = LockSpec {
        name: raw.lock.name.clone().unwrap_or_else(|| "lock".to_owned()),
        ttl_ms,
        acquire_timeout_ms,
        retry_delay_ms: raw
            .lock
            .retry_delay_ms
            .unwrap_or(MsRange { min: 5, max: 20 }),
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
        options: client_kind.options(&ClientTable::new(*src, raw.client.is_some()))?,
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
        clients: in_range(src, "workload.clients", &raw.workload.clients, 1, 1000)? as usize,
        duration_ms: in_range(
            src,
            "workload.duration_ms",
            &raw.workload.duration_ms,
            1,
            86_400_000,
        )?,
        hold_ms: raw.workload.hold_ms.unwrap_or(MsRange::fixed(5)),
        think_ms: raw.workload.think_ms.unwrap_or(MsRange { min: 0, max: 20 }),
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
        Some(d) => in_range(src, "check.deadlock_ms", d, 1, 86_400_000)?,
        None => (3 * ttl_ms).max(3000),
    };

    let node_names: Vec<String> = (1..=nodes).map(|i| format!("n{i}")).collect();
    let mut faults = Vec::new();
    for f in &raw.nemesis {
        faults.push(fault(src, f, &node_names, workload.clients, server)?);
    }

    Ok(Scenario {
        name: raw.name.get_ref().clone(),
        description: raw.description,
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
    })
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
        "isolate" if caps.peers.is_err() => {
            return Err(src.error(
                f.fault.span(),
                "nemesis.fault",
                format!(
                    "fault {kind_name:?} needs a cluster backend; server {:?} cannot: {}",
                    server.name(),
                    caps.peers.unwrap_err()
                ),
            ))
        }
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
    if kind_name.starts_with("clock-") {
        if let Err(why) = caps.clock {
            return Err(src.error(
                f.fault.span(),
                "nemesis.fault",
                format!(
                    "clock faults cannot be injected on server {:?}: {why}",
                    server.name()
                ),
            ));
        }
    }
    if let Some(extra) = f.set_fields().into_iter().find(|n| !allowed.contains(n)) {
        return Err(here(
            &format!("nemesis.{extra}"),
            format!(
                "not allowed for fault {kind_name:?}; allowed here: at_ms, every_ms, count, {}",
                allowed.join(", ")
            ),
        ));
    }
    let need_duration = || {
        f.duration_ms.ok_or_else(|| {
            here(
                "nemesis.duration_ms",
                format!("fault {kind_name:?} needs duration_ms (milliseconds or [min, max])"),
            )
        })
    };
    let need_offset = || {
        f.offset_ms.ok_or_else(|| {
            here(
                "nemesis.offset_ms",
                format!("fault {kind_name:?} needs offset_ms (milliseconds, negative: back)"),
            )
        })
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
                let mut names = Vec::new();
                for item in items {
                    match item.as_str() {
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
            latency_ms: f.latency_ms.ok_or_else(|| {
                here(
                    "nemesis.latency_ms",
                    "fault \"latency\" needs latency_ms".to_owned(),
                )
            })?,
            jitter_ms: f.jitter_ms.unwrap_or(0),
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
                Some(p) => in_range(src, "nemesis.period_ms", p, 1, 3_600_000)?,
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
    if f.count == Some(0) {
        return Err(here(
            "nemesis.count",
            "0 would never run the fault; allowed: 1 or more".to_owned(),
        ));
    }
    Ok(Fault {
        kind,
        at_ms: f.at_ms.unwrap_or(MsRange::fixed(0)),
        every_ms: f.every_ms,
        count: f.count,
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
