//! The TOML layout of a scenario file and its conversion into a checked [`Scenario`].

use super::fault_entry::read_fault;
use super::model::*;
use crate::backends::{client_names, find_client};
use crate::backends::{find_server, server_names};
use crate::client::ClientKind;
use crate::fault::RawEntry;
use crate::locks::{find_lock, lock_names};
use crate::server::{ServerKind, ServerVersion};
use crate::vocab::rules::{self, *};
use crate::vocab::{
    in_range, lock_names_of, ClientTable, Discipline, LockSpec, MsRange, Persistence, ResourceMode,
    ScenarioError, Source, WorkloadKind, WorkloadSpec,
};
use lockpick_checker::verdict::Verdict;
use serde::Deserialize;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawScenario {
    pub(crate) name: Spanned<String>,
    pub(crate) description: Option<Spanned<String>>,
    pub(crate) expected: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) seed: u64,
    /// Shorthand for `[server]` + `[client]`: a named lock.
    pub(crate) backend: Option<Spanned<RawServer>>,
    pub(crate) server: Option<Spanned<RawServer>>,
    /// Read by the client kind named in it (see [`ClientTable`]); only its `kind` here.
    pub(crate) client: Option<Spanned<RawClientKind>>,
    #[serde(default)]
    pub(crate) lock: RawLock,
    pub(crate) workload: RawWorkload,
    #[serde(default)]
    pub(crate) resource: RawResource,
    #[serde(default)]
    pub(crate) check: RawCheck,
    #[serde(default)]
    pub(crate) nemesis: Vec<RawEntry>,
}

/// `[server]`, or the `[backend]` shorthand, whose `kind` names a lock instead.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawServer {
    pub(crate) kind: Spanned<String>,
    pub(crate) nodes: Option<Spanned<u64>>,
    pub(crate) persistence: Option<Spanned<String>>,
    /// The server's release, one of its kind's [`ServerKind::versions`].
    pub(crate) version: Option<Spanned<String>>,
    /// Whether the run writes the server's own record of the lock (`server.jsonl`), where
    /// the kind has a watcher: on unless `false`.
    pub(crate) record: Option<Spanned<bool>>,
}

/// The `kind` and `discipline` of `[client]`; the other keys are the client kind's to read.
#[derive(Deserialize)]
pub(crate) struct RawClientKind {
    pub(crate) kind: Option<Spanned<String>>,
    pub(crate) discipline: Option<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLock {
    pub(crate) name: Option<Spanned<String>>,
    pub(crate) ttl_ms: Option<Spanned<u64>>,
    /// What frees the lock under a silent holder when it is not `ttl_ms` (a server timeout
    /// of a lease-less lock): the lease exposure measures faults against.
    pub(crate) lease_ms: Option<Spanned<u64>>,
    pub(crate) acquire_timeout_ms: Option<Spanned<u64>>,
    pub(crate) retry_delay_ms: Option<Spanned<MsRange>>,
    pub(crate) op_timeout_ms: Option<Spanned<u64>>,
    #[serde(default)]
    pub(crate) watchdog: bool,
    /// The client's library renews the lock unseen (a session kept by heartbeats).
    #[serde(default)]
    pub(crate) renews: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawWorkload {
    pub(crate) kind: Spanned<String>,
    pub(crate) clients: Spanned<u64>,
    pub(crate) duration_ms: Spanned<u64>,
    pub(crate) hold_ms: Option<Spanned<MsRange>>,
    pub(crate) think_ms: Option<Spanned<MsRange>>,
    /// Independent locks the clients share; each operation picks one from the seed.
    pub(crate) locks: Option<Spanned<u64>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawResource {
    pub(crate) mode: Option<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCheck {
    pub(crate) property: Option<Spanned<String>>,
    pub(crate) deadlock_ms: Option<Spanned<u64>>,
}

/// Fields that moved out of a table, and where to: a scenario written for an older lockpick
/// is told where its field went, not only that it is unknown.
const MOVED: &[(&str, &str)] = &[
    ("lock.wait_replicas", SENTINEL_CLIENT),
    ("lock.wait_timeout_ms", SENTINEL_CLIENT),
    ("lock.wait_release", SENTINEL_CLIENT),
];

const SENTINEL_CLIENT: &str = "an option of the client now: write [server] kind = \"redis-sentinel\" and [client] kind = \"sentinel-lock\" (instead of [backend]), and put the field under [client] (as in scenarios/redis-failover-wait.toml)";

/// `error` with where its field moved, if it is an unknown field that moved.
fn moved(error: ScenarioError) -> ScenarioError {
    match error {
        ScenarioError::Invalid(mut at) if at.message.starts_with("unknown field") => {
            if let Some((_, hint)) = MOVED.iter().find(|(field, _)| *field == at.field) {
                let key = at.field.rsplit('.').next().unwrap_or(&at.field);
                at.message = format!("`{key}` moved out of [lock]: it is {hint}");
            }
            ScenarioError::Invalid(at)
        }
        other => other,
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
    let raw: RawScenario = toml::from_str(src.text).map_err(|e| moved(src.toml_error(&e)))?;
    check(
        src,
        &raw,
        &ClientTable::new(src.clone(), raw.client.is_some()),
    )
}

/// Turns the file's layout into a checked [`Scenario`]: every rule a scenario obeys is here,
/// once. `raw` may come from a file or be filled in as values by another reader (a matrix
/// cell), its spans in `src`, which errors then name; `client` holds the `[client]` options,
/// which the client kind reads itself.
///
/// The fields are checked in a fixed order (name, description, the number of `[[nemesis]]`
/// entries, `[server]`, `expected`, `[lock]`, `[client]`, `[workload]`, `[resource]`,
/// `[check]`, each `[[nemesis]]` entry, the schedule's size): the first error found is the one
/// reported.
pub(crate) fn check(
    src: &Source,
    raw: &RawScenario,
    client: &ClientTable,
) -> Result<Scenario, ScenarioError> {
    // The name becomes the run's folder under the store and is printed: it must be a plain
    // file name that cannot climb out of the store, nest, or forge output.
    let name = name_value(src, "name", &raw.name)?;
    let description = description(src, raw)?;
    check_entry_count(src, &raw.nemesis)?;
    let servers = server_settings(src, raw)?;
    let expected = expected_verdict(src, raw)?;
    let lock = lock_spec(src, raw, &servers)?;
    let client = client_spec(src, raw, servers.client_kind, client)?;
    let workload = workload_spec(src, &raw.workload)?;
    let resource = resource_mode(src, &raw.resource)?;
    let property = property(src, &raw.check)?;
    let deadlock_ms = match &raw.check.deadlock_ms {
        Some(d) => in_range(src, "check.deadlock_ms", d, 1, MAX_RUN_MS)?,
        None => (3 * lock.ttl_ms).max(3000),
    };
    let faults = faults(src, raw, &servers, workload.clients)?;
    let scenario = Scenario {
        name,
        description,
        path: src.path.to_owned(),
        expected,
        seed: raw.seed,
        server: servers.server,
        version: servers.version,
        nodes: servers.nodes,
        persistence: servers.persistence,
        record_server: servers.record,
        client,
        lock,
        workload,
        resource,
        property,
        deadlock_ms,
        nemesis: Nemesis { faults },
    };
    check_schedule_size(src, raw, &scenario)?;
    Ok(scenario)
}

/// `description`, within [`DESCRIPTION_MAX_CHARS`] of printable text; empty when absent.
fn description(src: &Source, raw: &RawScenario) -> Result<String, ScenarioError> {
    match &raw.description {
        Some(d) => {
            rules::check_text(d.get_ref(), DESCRIPTION_MAX_CHARS)
                .map_err(|why| src.error(d.span(), "description", why))?;
            Ok(d.get_ref().clone())
        }
        None => Ok(String::new()),
    }
}

/// Refuses more than [`MAX_FAULT_ENTRIES`] `[[nemesis]]` entries, at the first one too many,
/// before any entry is read.
fn check_entry_count(src: &Source, nemesis: &[RawEntry]) -> Result<(), ScenarioError> {
    if nemesis.len() <= MAX_FAULT_ENTRIES {
        return Ok(());
    }
    Err(src.error(
        nemesis[MAX_FAULT_ENTRIES].span(),
        "nemesis",
        format!(
            "{} [[nemesis]] entries; allowed: at most {MAX_FAULT_ENTRIES} (use every_ms and count for a fault that recurs)",
            nemesis.len()
        ),
    ))
}

/// What `[server]` (or `[backend]`) and `[client] kind` say, checked: the kinds, and how the
/// server runs.
struct ServerSettings<'a> {
    server: &'static dyn ServerKind,
    client_kind: &'static dyn ClientKind,
    /// The table the server settings are in; an error about a field left at its default
    /// points at its `kind`.
    table: Option<&'a RawServer>,
    nodes: usize,
    version: Option<&'static ServerVersion>,
    persistence: Persistence,
    record: Option<bool>,
}

/// Reads the server and client kinds, then the server's `nodes`, `version` and
/// `persistence`, each checked against what that server (and client) can take.
fn server_settings<'a>(
    src: &Source,
    raw: &'a RawScenario,
) -> Result<ServerSettings<'a>, ScenarioError> {
    let (server, client_kind, section) = server_and_client(src, raw)?;
    let table = raw
        .backend
        .as_ref()
        .or(raw.server.as_ref())
        .map(|t| t.get_ref());
    let nodes = node_count(src, server, client_kind, table, section)?;
    let version = server_version(src, server, table.and_then(|t| t.version.as_ref()), section)?;
    let persistence = persistence(src, server, table, section)?;
    let record = record(src, server, table, section)?;
    Ok(ServerSettings {
        server,
        client_kind,
        table,
        nodes,
        version,
        persistence,
        record,
    })
}

/// `nodes` of the server table, within the [`node_rule`] of the server and client (a count
/// that cannot always form a majority is refused); the rule's default when absent.
fn node_count(
    src: &Source,
    server: &'static dyn ServerKind,
    client_kind: &'static dyn ClientKind,
    table: Option<&RawServer>,
    section: &str,
) -> Result<usize, ScenarioError> {
    let rule = node_rule(server, client_kind);
    let Some(n) = table.and_then(|t| t.nodes.as_ref()) else {
        return Ok(rule.default);
    };
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
    Ok(v)
}

/// `record` of the server table: whether a run watches the nodes for the server's own record
/// of the lock; `None` when the scenario does not say (the run decides: on for lockpick's own
/// servers where the kind has a watcher). `true` is refused where the kind has none, so a
/// scenario never believes it has a record it does not get.
fn record(
    src: &Source,
    server: &'static dyn ServerKind,
    table: Option<&RawServer>,
    section: &str,
) -> Result<Option<bool>, ScenarioError> {
    let Some(r) = table.and_then(|t| t.record.as_ref()) else {
        return Ok(None);
    };
    if *r.get_ref() && server.watch().is_none() {
        return Err(src.error(
            r.span(),
            &format!("{section}.record"),
            format!(
                "server {:?} has no watcher to record what its nodes do; allowed: false",
                server.name()
            ),
        ));
    }
    Ok(Some(*r.get_ref()))
}

/// `persistence` of the server table, refused for a server that cannot take it; none when
/// absent.
fn persistence(
    src: &Source,
    server: &'static dyn ServerKind,
    table: Option<&RawServer>,
    section: &str,
) -> Result<Persistence, ScenarioError> {
    let Some(p) = table.and_then(|t| t.persistence.as_ref()) else {
        return Ok(Persistence::None);
    };
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
    Ok(v)
}

/// `expected`: the verdict the scenario is expected to reach, if it says.
fn expected_verdict(src: &Source, raw: &RawScenario) -> Result<Option<Verdict>, ScenarioError> {
    raw.expected
        .as_ref()
        .map(|e| {
            one_of(
                src,
                "expected",
                e,
                // `invalid` is a safety violation; a deadlock is `stuck`; `not-exposed`: the
                // fault, by design of the scenario, opens no window for a violation (the suite
                // holds it to that, so a change that makes it expose the lock shows).
                // `not-tested` is its name in files written before exposure.
                &[
                    ("valid", Verdict::Valid),
                    ("invalid", Verdict::Invalid),
                    ("stuck", Verdict::Stuck),
                    ("not-exposed", Verdict::NotExposed),
                    ("not-tested", Verdict::NotExposed),
                    ("unknown", Verdict::Unknown),
                ],
            )
        })
        .transpose()
}

/// `[lock]`, with `[workload] locks`, checked field by field and then by the server
/// ([`ServerKind::check_lock`]), whose error points at the field it names or, for a field
/// left at its default, at the server's `kind`.
fn lock_spec(
    src: &Source,
    raw: &RawScenario,
    servers: &ServerSettings,
) -> Result<LockSpec, ScenarioError> {
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
    let lease_ms = (raw.lock.lease_ms.as_ref())
        .map(|v| in_range(src, "lock.lease_ms", v, 1, 3_600_000))
        .transpose()?;
    let lock_name = match &raw.lock.name {
        Some(n) => name_value(src, "lock.name", n)?,
        None => "lock".to_owned(),
    };
    let count = lock_count(src, &raw.workload, &lock_name, servers.client_kind)?;
    let lock = LockSpec {
        // A ZooKeeper node, an etcd key and Redis keys are named after it.
        name: lock_name,
        count,
        ttl_ms,
        lease_ms,
        acquire_timeout_ms,
        retry_delay_ms: match &raw.lock.retry_delay_ms {
            Some(r) => ms_in_range(src, "lock.retry_delay_ms", r, 0, 60_000)?,
            None => MsRange { min: 5, max: 20 },
        },
        op_timeout_ms,
        watchdog: raw.lock.watchdog,
        renews: raw.lock.renews,
    };
    if let Err(e) = servers.server.check_lock(&lock) {
        let span = match e.field {
            "lock.ttl_ms" => raw.lock.ttl_ms.as_ref().map(|v| v.span()),
            "lock.acquire_timeout_ms" => raw.lock.acquire_timeout_ms.as_ref().map(|v| v.span()),
            "lock.op_timeout_ms" => raw.lock.op_timeout_ms.as_ref().map(|v| v.span()),
            // Another field, or one left at its default: the line of the server's kind.
            _ => None,
        };
        let at = span.unwrap_or_else(|| servers.table.map_or(0..0, |t| t.kind.span()));
        return Err(src.error(at, e.field, e.message));
    }
    Ok(lock)
}

/// `[client]`: its `discipline` (the client kind's default when absent), then the options
/// the client kind reads from `table` itself.
fn client_spec(
    src: &Source,
    raw: &RawScenario,
    client_kind: &'static dyn ClientKind,
    table: &ClientTable,
) -> Result<ClientSpec, ScenarioError> {
    let discipline = match raw
        .client
        .as_ref()
        .and_then(|c| c.get_ref().discipline.as_ref())
    {
        Some(d) => {
            let discipline = one_of(
                src,
                "client.discipline",
                d,
                &Discipline::ALL.map(|d| (d.name(), d)),
            )?;
            // A built-in recipe has no documentation to follow nor notices to honour.
            if discipline == Discipline::Documented && !client_kind.takes_documented() {
                return Err(src.error(
                    d.span(),
                    "client.discipline",
                    format!(
                        "documented follows a library's documentation, for an adapter (kind = \"process\"); client kind \"{}\" takes: trusting, careful",
                        client_kind.name()
                    ),
                ));
            }
            discipline
        }
        None => client_kind.default_discipline(),
    };
    Ok(ClientSpec {
        kind: client_kind,
        options: client_kind.options(table)?,
        discipline,
    })
}

/// `[workload]`, except its `locks` (read with `[lock]`).
fn workload_spec(src: &Source, workload: &RawWorkload) -> Result<WorkloadSpec, ScenarioError> {
    Ok(WorkloadSpec {
        kind: one_of(
            src,
            "workload.kind",
            &workload.kind,
            &[
                ("fenced-write", WorkloadKind::FencedWrite),
                ("counter", WorkloadKind::Counter),
            ],
        )?,
        clients: in_range(
            src,
            "workload.clients",
            &workload.clients,
            1,
            MAX_CLIENTS as u64,
        )? as usize,
        duration_ms: in_range(
            src,
            "workload.duration_ms",
            &workload.duration_ms,
            1,
            MAX_RUN_MS,
        )?,
        hold_ms: match &workload.hold_ms {
            Some(h) => ms_in_range(src, "workload.hold_ms", h, 0, MAX_FAULT_MS)?,
            None => MsRange::fixed(5),
        },
        think_ms: match &workload.think_ms {
            Some(t) => ms_in_range(src, "workload.think_ms", t, 0, MAX_FAULT_MS)?,
            None => MsRange { min: 0, max: 20 },
        },
    })
}

/// `[resource] mode`; naive when absent.
fn resource_mode(src: &Source, resource: &RawResource) -> Result<ResourceMode, ScenarioError> {
    match &resource.mode {
        Some(m) => one_of(
            src,
            "resource.mode",
            m,
            &[
                ("naive", ResourceMode::Naive),
                ("fenced", ResourceMode::Fenced),
            ],
        ),
        None => Ok(ResourceMode::Naive),
    }
}

/// `[check] property`; exclusive when absent.
fn property(src: &Source, check: &RawCheck) -> Result<Property, ScenarioError> {
    match &check.property {
        Some(p) => one_of(
            src,
            "check.property",
            p,
            &[
                ("exclusive", Property::Exclusive),
                ("fenced", Property::Fenced),
            ],
        ),
        None => Ok(Property::Exclusive),
    }
}

/// Reads every `[[nemesis]]` entry in order, refusing one the server cannot take (at its
/// `fault`) or whose point the client kind refuses (at its `point`).
fn faults(
    src: &Source,
    raw: &RawScenario,
    servers: &ServerSettings,
    clients: usize,
) -> Result<Vec<Fault>, ScenarioError> {
    let node_names: Vec<String> = (1..=servers.nodes).map(|i| format!("n{i}")).collect();
    let mut faults = Vec::new();
    for f in &raw.nemesis {
        let fault = read_fault(src, f, &node_names, clients, servers.server)?;
        // What the server can take is the fault's to say, from the server's capabilities.
        if let Some(why) = fault.spec.cannot_run_on(servers.server) {
            let at = f
                .get_ref()
                .get("fault")
                .map_or_else(|| f.span(), Spanned::span);
            return Err(src.error(at, "nemesis.fault", why.why));
        }
        if let Some(why) = inside_requests_refused(&*fault.spec, servers.client_kind) {
            let at = f
                .get_ref()
                .get("point")
                .map_or_else(|| f.span(), Spanned::span);
            return Err(src.error(at, "nemesis.point", why));
        }
        faults.push(fault);
    }
    Ok(faults)
}

/// Refuses a schedule too large to draw, at the field of the entry that makes it so. The
/// schedule is drawn whole before the run: a fault that recurs or flips too often would fill
/// memory before anything starts.
fn check_schedule_size(
    src: &Source,
    raw: &RawScenario,
    scenario: &Scenario,
) -> Result<(), ScenarioError> {
    let Err((index, field, why)) =
        crate::fault::check_schedule_size(&scenario.nemesis.faults, scenario.workload.duration_ms)
    else {
        return Ok(());
    };
    let entry = raw.nemesis[index].get_ref();
    let key = field.strip_prefix("nemesis.").unwrap_or(field);
    let span = entry
        .get(key)
        .map(Spanned::span)
        .unwrap_or_else(|| raw.nemesis[index].span());
    Err(src.error(span, field, why))
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
    let longest = lock_names_of(stem, count).pop().unwrap_or_default();
    if let Err(why) = rules::check_name(&longest) {
        return refuse(format!(
            "{count} locks named after lock.name {stem:?}: {why}"
        ));
    }
    Ok(count)
}

/// The release `asked` names among `server`'s versions, or its default (the first) when the
/// table does not say; `None` for a kind without versions, which takes no `version`.
fn server_version(
    src: &Source,
    server: &'static dyn ServerKind,
    asked: Option<&Spanned<String>>,
    section: &str,
) -> Result<Option<&'static ServerVersion>, ScenarioError> {
    let versions = server.versions();
    let Some(asked) = asked else {
        return Ok(versions.first());
    };
    let field = format!("{section}.version");
    if versions.is_empty() {
        return Err(src.error(
            asked.span(),
            &field,
            format!(
                "server {:?} takes no version: it runs what its Debian package installed; servers with versions: {}",
                server.name(),
                crate::backends::servers()
                    .filter(|s| !s.versions().is_empty())
                    .map(|s| s.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    versions
        .iter()
        .find(|v| v.name == asked.get_ref())
        .map(Some)
        .ok_or_else(|| {
            src.error(
                asked.span(),
                &field,
                format!(
                    "unknown {} version {:?}; allowed: {}",
                    server.name(),
                    asked.get_ref(),
                    versions
                        .iter()
                        .map(|v| v.describe())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
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
