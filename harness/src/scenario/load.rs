//! Finding scenario files by name or path, and loading them.

use super::file;
use super::model::Scenario;
use crate::vocab::{ScenarioError, Source};
use std::path::{Path, PathBuf};

/// The folders searched for `<name>.toml`: `./scenarios`, then the one shipped in the source tree.
fn scenario_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![PathBuf::from("scenarios")];
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    if !dirs.iter().any(|d| same_dir(d, &shipped)) {
        dirs.push(shipped);
    }
    dirs
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Subfolders of a scenario folder whose `*.toml` files are scenarios too, each a collection
/// with a README of its own. (`matrix/` is not one: it holds matrix files.)
pub const SCENARIO_GROUPS: &[&str] = &["known-bugs"];

/// A scenario found on disk, for listings.
#[derive(Debug, Clone)]
pub struct ScenarioEntry {
    pub name: String,
    pub path: PathBuf,
    /// The [`SCENARIO_GROUPS`] subfolder it is in, if any.
    pub group: Option<&'static str>,
}

impl ScenarioEntry {
    /// `group/name`, or the name of a scenario in no group: what `lockpick suite --filter`
    /// matches, so a group's name picks exactly its scenarios.
    pub fn qualified_name(&self) -> String {
        match self.group {
            Some(group) => format!("{group}/{}", self.name),
            None => self.name.clone(),
        }
    }
}

/// Every `*.toml` in the scenario folders and their [`SCENARIO_GROUPS`] subfolders, by name;
/// the first folder wins on a clash.
pub fn list_scenarios() -> Vec<ScenarioEntry> {
    let mut out: Vec<ScenarioEntry> = Vec::new();
    for dir in scenario_dirs() {
        let folders = std::iter::once((dir.clone(), None))
            .chain(SCENARIO_GROUPS.iter().map(|g| (dir.join(g), Some(*g))));
        for (folder, group) in folders {
            let Ok(read) = std::fs::read_dir(&folder) else {
                continue;
            };
            for entry in read.flatten() {
                let path = entry.path();
                if path.extension().is_some_and(|e| e == "toml") {
                    let name = path
                        .file_stem()
                        .unwrap_or_default()
                        .to_string_lossy()
                        .into_owned();
                    if !out.iter().any(|e| e.name == name) {
                        out.push(ScenarioEntry { name, path, group });
                    }
                }
            }
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Resolves a scenario argument: an existing file path, or the name of a shipped scenario
/// (`name`, or `group/name` for one in a group folder).
pub fn find_scenario(name_or_path: &str) -> Result<PathBuf, ScenarioError> {
    let as_path = Path::new(name_or_path);
    if as_path.is_file() {
        return Ok(as_path.to_owned());
    }
    let known = list_scenarios();
    known
        .iter()
        .find(|e| e.name == name_or_path || e.qualified_name() == name_or_path)
        .map(|e| e.path.clone())
        .ok_or_else(|| ScenarioError::UnknownName {
            name: name_or_path.to_owned(),
            known: if known.is_empty() {
                "(none found)".to_owned()
            } else {
                known
                    .iter()
                    .map(|e| e.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        })
}

/// Finds and loads a scenario by name or path.
pub fn load_scenario(name_or_path: &str) -> Result<Scenario, ScenarioError> {
    let path = find_scenario(name_or_path)?;
    let text = std::fs::read_to_string(&path).map_err(|source| ScenarioError::Io {
        path: path.clone(),
        source,
    })?;
    let scenario = parse_scenario(&path, &text)?;
    // A scenario loaded to run: its client must work here (see `ClientOptions::preflight`).
    scenario.client.options.preflight()?;
    Ok(scenario)
}

/// Parses scenario text; `path` is used in messages.
pub fn parse_scenario(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
    file::parse(&Source::new(path, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "t"
expected = "invalid"
seed = 7
[backend]
kind = "redis"
[lock]
ttl_ms = 500
[workload]
kind = "counter"
clients = 3
duration_ms = 1000
[[nemesis]]
fault = "client-pause"
at_ms = [100, 200]
point = "before-write"
duration_ms = 900
[[nemesis]]
fault = "latency"
nodes = ["n1"]
latency_ms = 50
duration_ms = 100
"#;

    fn parse(text: &str) -> Result<Scenario, String> {
        parse_scenario(Path::new("s.toml"), text).map_err(|e| e.to_string())
    }

    #[test]
    fn good_scenario_parses_with_defaults() {
        let s = parse(GOOD).unwrap();
        assert_eq!(s.seed, 7);
        assert_eq!(s.lock.ttl_ms, 500);
        assert_eq!(s.deadlock_ms, 3000);
        assert_eq!(s.nemesis.faults.len(), 2);
        assert_eq!(
            s.nemesis.faults[0].spec.label(),
            "client-pause before-write"
        );
        assert_eq!(s.nemesis.faults[0].line, 13, "the [[nemesis]] header line");
        let latency = format!("{:?}", s.nemesis.faults[1].spec);
        assert!(
            latency.contains(r#"reach: Clients(Nodes(["n1"]))"#),
            "{latency}"
        );
    }

    #[test]
    fn unknown_key_names_file_line_and_allowed_fields() {
        let err = parse(&GOOD.replace("ttl_ms = 500", "ttl = 500")).unwrap_err();
        assert!(err.starts_with("load scenario s.toml:8:"), "{err}");
        assert!(err.contains("unknown field `ttl`"), "{err}");
        assert!(err.contains("ttl_ms"), "{err}");
    }

    #[test]
    fn bad_enum_value_lists_allowed_values() {
        let err = parse(&GOOD.replace("kind = \"counter\"", "kind = \"count\"")).unwrap_err();
        assert_eq!(
            err,
            "load scenario s.toml:10: field `workload.kind`: unknown value \"count\"; allowed: fenced-write, counter"
        );
    }

    #[test]
    fn wrong_type_names_the_field_from_its_line() {
        let err = parse(&GOOD.replace("clients = 3", "clients = \"three\"")).unwrap_err();
        assert!(
            err.starts_with("load scenario s.toml:11: field `workload.clients`:"),
            "{err}"
        );
    }

    #[test]
    fn out_of_range_says_what_is_allowed() {
        let err = parse(&GOOD.replace("clients = 3", "clients = 0")).unwrap_err();
        assert!(
            err.contains(":11: field `workload.clients`: 0 is out of range; allowed: 1 to 1000"),
            "{err}"
        );
    }

    /// `GOOD` on a process client (a path that need not exist: only `preflight` checks it).
    fn on_process(extra_client: &str, pause: &str) -> String {
        GOOD.replace(
            "[backend]\nkind = \"redis\"",
            &format!(
                "[server]\nkind = \"redis\"\n[client]\nkind = \"process\"\ncommand = [\"python3\", \"./a.py\"]\n{extra_client}"
            ),
        )
        .replace("point = \"before-write\"", pause)
    }

    #[test]
    fn a_pause_inside_requests_names_its_ops_and_needs_an_adapter_process() {
        let s = parse(&on_process(
            "",
            "point = \"during-op\"\nops = [\"release\"]",
        ))
        .unwrap();
        assert_eq!(
            s.nemesis.faults[0].spec.label(),
            "client-pause during-op (release)"
        );
        let all = parse(&on_process("", "point = \"during-op\"")).unwrap();
        assert_eq!(all.nemesis.faults[0].spec.label(), "client-pause during-op");
        let bad = parse(&on_process("", "point = \"during-op\"\nops = [\"write\"]")).unwrap_err();
        assert!(
            bad.contains(
                "field `nemesis.ops`: unknown request \"write\"; allowed: acquire, release, renew"
            ),
            "{bad}"
        );
        let empty = parse(&on_process("", "point = \"during-op\"\nops = []")).unwrap_err();
        assert!(empty.contains("field `nemesis.ops`: empty"), "{empty}");
        let elsewhere = parse(&on_process(
            "",
            "point = \"before-write\"\nops = [\"release\"]",
        ))
        .unwrap_err();
        assert!(
            elsewhere.contains("field `nemesis.ops`: only a pause at point \"during-op\""),
            "{elsewhere}"
        );
        // A built-in client's requests are not an adapter's: refused where the point is.
        let builtin =
            parse(&GOOD.replace("point = \"before-write\"", "point = \"during-op\"")).unwrap_err();
        assert!(
            builtin.contains(":16: field `nemesis.point`: client-pause during-op stops an adapter process inside a request; client \"redis-lock\" is not one"),
            "{builtin}"
        );
    }

    #[test]
    fn the_discipline_defaults_to_trusting_for_adapters_and_careful_for_recipes() {
        use crate::vocab::Discipline;
        assert_eq!(parse(GOOD).unwrap().client.discipline, Discipline::Careful);
        let adapter = parse(&on_process("", "point = \"before-write\"")).unwrap();
        assert_eq!(adapter.client.discipline, Discipline::Trusting);
        let careful = parse(&on_process(
            "discipline = \"careful\"",
            "point = \"before-write\"",
        ));
        assert_eq!(careful.unwrap().client.discipline, Discipline::Careful);
        let bad = parse(&on_process(
            "discipline = \"brave\"",
            "point = \"before-write\"",
        ))
        .unwrap_err();
        assert!(
            bad.contains(
                "field `client.discipline`: unknown value \"brave\"; allowed: trusting, careful, documented"
            ),
            "{bad}"
        );
        let recipe = GOOD.replace(
            "[backend]\nkind = \"redis\"",
            "[server]\nkind = \"redis\"\n[client]\nkind = \"redis-lock\"\ndiscipline = \"trusting\"",
        );
        assert_eq!(
            parse(&recipe).unwrap().client.discipline,
            Discipline::Trusting
        );
    }

    #[test]
    fn documented_follows_what_the_adapter_declares_its_library_gives() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let with = |adapter: &str, resource: &str| {
            let text = GOOD.replace(
                "[backend]\nkind = \"redis\"",
                &format!(
                    "[server]\nkind = \"redis\"\n[client]\nkind = \"process\"\ncommand = [\"python3\", \"{}\"]\ndiscipline = \"documented\"\n{resource}",
                    root.join(adapter).display()
                ),
            );
            let s = parse(&text)?;
            s.client.options.preflight().map_err(|e| e.to_string())?;
            Ok::<_, String>(s)
        };
        // kazoo gives notices and a fencing token: its documented use needs a resource that
        // checks the token.
        let naive = with("clients/python/kazoo/adapter.py", "").unwrap_err();
        assert!(
            naive.contains(":10: field `client.discipline`: the library gives a fencing token (the lock node's sequence number, declared in ")
                && naive.contains("set [resource] mode = \"fenced\""),
            "{naive}"
        );
        let fenced = with(
            "clients/python/kazoo/adapter.py",
            "[resource]\nmode = \"fenced\"",
        )
        .unwrap();
        assert_eq!(
            fenced.client.discipline,
            crate::vocab::Discipline::Documented
        );
        // redis-py gives neither a notice nor a token: documented would be trusting.
        let nothing = with("clients/python/redis_py/adapter.py", "").unwrap_err();
        assert!(
            nothing.contains("gives no notice and no fencing token")
                && nothing.contains("allowed here: trusting, careful"),
            "{nothing}"
        );
        // A built-in recipe has no documentation to follow.
        let recipe = parse(&GOOD.replace(
            "[backend]\nkind = \"redis\"",
            "[server]\nkind = \"redis\"\n[client]\nkind = \"redis-lock\"\ndiscipline = \"documented\"",
        ))
        .unwrap_err();
        assert!(
            recipe.contains("field `client.discipline`: documented follows a library's documentation, for an adapter (kind = \"process\"); client kind \"redis-lock\" takes: trusting, careful"),
            "{recipe}"
        );
    }

    #[test]
    fn field_not_allowed_for_fault() {
        let err = parse(&GOOD.replace("point = \"before-write\"", "latency_ms = 3")).unwrap_err();
        assert!(
            err.contains("field `nemesis.latency_ms`: not allowed for fault \"client-pause\""),
            "{err}"
        );
    }

    #[test]
    fn unknown_node_is_rejected() {
        let err = parse(&GOOD.replace("[\"n1\"]", "[\"n9\"]")).unwrap_err();
        assert!(
            err.contains("field `nemesis.nodes`: unknown node \"n9\""),
            "{err}"
        );
    }

    #[test]
    fn clock_faults_parse_and_need_their_fields() {
        let with = |fault: &str| {
            parse(&format!(
                "name = \"t\"\n[backend]\nkind = \"redlock\"\npersistence = \"aof-always\"\n[workload]\nkind = \"counter\"\nclients = 2\nduration_ms = 100\n[[nemesis]]\n{fault}\nnodes = [\"n5\"]\nduration_ms = 50\n"
            ))
        };
        let s = with("fault = \"clock-rate\"\nrate = 0.5").unwrap();
        assert_eq!(s.nodes, 5, "redlock defaults to five masters");
        assert_eq!(s.persistence, crate::scenario::Persistence::AofAlways);
        assert!(s.has_clock_faults());
        assert_eq!(s.nemesis.faults[0].spec.label(), "clock-rate x0.5");
        let s = with("fault = \"clock-jump\"\noffset_ms = -2500").unwrap();
        assert_eq!(s.nemesis.faults[0].spec.label(), "clock-jump -2500 ms");
        let err = with("fault = \"clock-jump\"").unwrap_err();
        assert!(err.contains("needs offset_ms"), "{err}");
        let err = with("fault = \"clock-strobe\"\noffset_ms = 10").unwrap_err();
        assert!(err.contains("needs period_ms"), "{err}");
        let err = with("fault = \"clock-rate\"\nrate = 0.0").unwrap_err();
        assert!(
            err.contains("field `nemesis.rate`: 0 is out of range"),
            "{err}"
        );
        let err = with("fault = \"node-crash\"\nrate = 2.0").unwrap_err();
        assert!(
            err.contains("not allowed for fault \"node-crash\""),
            "{err}"
        );
    }

    #[test]
    fn clock_faults_on_a_backend_that_cannot_take_them_are_rejected_with_the_reason() {
        let text = "name = \"t\"\n[backend]\nkind = \"zookeeper\"\n[workload]\nkind = \"counter\"\nclients = 2\nduration_ms = 100\n[[nemesis]]\nfault = \"clock-jump\"\noffset_ms = 5000\nduration_ms = 50\n";
        let err = parse(text).unwrap_err();
        assert!(
            err.contains(":9: field `nemesis.fault`: clock-jump cannot run on server \"zookeeper\" (it moves clocks): its servers do not run under libfaketime"),
            "{err}"
        );
        // The sentinel deployment's redis nodes run under libfaketime.
        assert!(parse(&text.replace("zookeeper", "redis-sentinel")).is_ok());
    }

    #[test]
    fn network_faults_name_nodes_or_peer_links_where_the_server_has_them() {
        let base = "name = \"t\"\n[backend]\nkind = \"SERVER\"\n[workload]\nkind = \"counter\"\nclients = 2\nduration_ms = 100\n[[nemesis]]\nfault = \"latency\"\nlatency_ms = 50\nduration_ms = 50\nLINKS\n";
        let sentinel = base.replace("SERVER", "redis-sentinel");
        let ok = parse(&sentinel.replace("LINKS", "links = [\"n2-to-n1\", \"s1-to-n1\"]")).unwrap();
        let slow = format!("{:?}", ok.nemesis.faults[0].spec);
        assert!(
            slow.contains(r#"reach: Peers(["n2-to-n1", "s1-to-n1"])"#),
            "{slow}"
        );
        let err = parse(&sentinel.replace("LINKS", "links = [\"n1-to-s1\"]")).unwrap_err();
        assert!(
            err.contains(":12: field `nemesis.links`: unknown link \"n1-to-s1\"")
                && err.contains("from one of s1, s2, s3 to a node"),
            "{err}"
        );
        let err = parse(&sentinel.replace("LINKS", "nodes = [\"n1\"]\nlinks = [\"n2-to-n1\"]"))
            .unwrap_err();
        assert!(
            err.contains("nodes (their client links) or links, not both"),
            "{err}"
        );
        // A single redis has no peer links to name.
        let err = parse(
            &base
                .replace(
                    "[backend]\nkind = \"SERVER\"",
                    "[server]\nkind = \"redis\"\nnodes = 2\n[client]\nkind = \"redlock\"",
                )
                .replace("LINKS", "links = [\"n2-to-n1\"]"),
        )
        .unwrap_err();
        assert!(err.contains("it acts on peer links"), "{err}");
    }

    #[test]
    fn wait_is_a_sentinel_lock_option() {
        let base = "name = \"t\"\n[server]\nkind = \"SERVER\"\n[client]\nkind = \"CLIENT\"\nwait_replicas = 1\nwait_release = true\n[workload]\nkind = \"counter\"\nclients = 2\nduration_ms = 100\n";
        let s = parse(
            &base
                .replace("SERVER", "redis-sentinel")
                .replace("CLIENT", "sentinel-lock"),
        )
        .unwrap();
        assert_eq!(s.nodes, 2);
        assert_eq!(s.lock_name(), "redis-sentinel");
        let options = format!("{:?}", s.client.options);
        assert!(
            options.contains("replicas: 1, timeout_ms: 100, release_unacked: true"),
            "{options}"
        );
        let err = parse(&base.replace("SERVER", "redis").replace("CLIENT", "redlock")).unwrap_err();
        assert!(
            err.starts_with("load scenario s.toml:6:")
                && err.contains("unknown field `wait_replicas`"),
            "{err}"
        );
    }

    const SPLIT: &str = r#"
name = "t"
[server]
kind = "redis"
nodes = 3
[client]
kind = "redlock"
[workload]
kind = "counter"
clients = 2
duration_ms = 100
"#;

    #[test]
    fn server_and_client_are_named_apart_and_the_shorthand_means_the_same() {
        let s = parse(SPLIT).unwrap();
        assert_eq!(
            (s.server.name(), s.client.kind.name()),
            ("redis", "redlock")
        );
        assert_eq!(s.nodes, 3);
        assert_eq!(s.lock_name(), "redlock");
        let short = parse(
            &SPLIT
                .replace("[server]", "[backend]")
                .replace("kind = \"redis\"", "kind = \"redlock\"")
                .replace("[client]\nkind = \"redlock\"\n", ""),
        )
        .unwrap();
        assert_eq!(
            (short.server.name(), short.client.kind.name(), short.nodes),
            ("redis", "redlock", 3)
        );
        // Redlock picks its own default within the server's node rule; redis-lock allows one.
        assert_eq!(parse(&SPLIT.replace("nodes = 3\n", "")).unwrap().nodes, 5);
        let err = parse(&SPLIT.replace("\"redlock\"", "\"redis-lock\"")).unwrap_err();
        assert!(
            err.contains(":5: field `server.nodes`: 3 is out of range; allowed: 1 to 1"),
            "{err}"
        );
    }

    #[test]
    fn a_client_on_a_server_it_cannot_use_is_refused_with_what_it_runs_on() {
        let err = parse(&SPLIT.replace("\"redis\"", "\"etcd\"")).unwrap_err();
        assert!(
            err.contains(":7: field `client.kind`: client \"redlock\" does not run on server \"etcd\"; it runs on: redis"),
            "{err}"
        );
        let err = parse(&SPLIT.replace("\"redlock\"", "\"chubby\"")).unwrap_err();
        assert!(
            err.contains("unknown value \"chubby\"; allowed: redis-lock"),
            "{err}"
        );
        let err = parse(&SPLIT.replace("[client]\nkind = \"redlock\"\n", "")).unwrap_err();
        assert!(
            err.contains("missing [client] for server \"redis\""),
            "{err}"
        );
        let err = parse(&format!("{SPLIT}[backend]\nkind = \"redis\"\n")).unwrap_err();
        assert!(err.contains("use one or the other"), "{err}");
        let err = parse(&SPLIT.replace("[server]", "[backend]")).unwrap_err();
        assert!(err.contains("[client] goes with [server]"), "{err}");
        let err = parse(
            &SPLIT
                .replace("[server]", "[backend]")
                .replace("[client]\nkind = \"redlock\"\n", "")
                .replace("\"redis\"", "\"mongo\""),
        )
        .unwrap_err();
        assert!(
            err.contains(
                "field `backend.kind`: unknown value \"mongo\"; allowed: redis, redis-naive, etcd"
            ),
            "{err}"
        );
    }

    #[test]
    fn persistence_is_refused_by_servers_that_cannot_lose_it() {
        let text = ETCD.replace(
            "kind = \"etcd\"",
            "kind = \"etcd\"\npersistence = \"aof-always\"",
        );
        let err = parse(&text).unwrap_err();
        assert!(
            err.contains("field `backend.persistence`: server \"etcd\" cannot take it"),
            "{err}"
        );
    }

    #[test]
    fn the_server_record_is_left_to_the_run_unless_said_and_can_be_turned_off() {
        assert_eq!(parse(GOOD).unwrap().record_server, None);
        assert_eq!(parse(ETCD).unwrap().record_server, None);
        let off = GOOD.replacen("[backend]", "[backend]\nrecord = false", 1);
        assert_eq!(parse(&off).unwrap().record_server, Some(false), "{off}");
        // etcd has a watcher: asking for it is fine; a kind without one is refused.
        let text = ETCD.replace("kind = \"etcd\"", "kind = \"etcd\"\nrecord = true");
        assert_eq!(parse(&text).unwrap().record_server, Some(true));
        let text = on_process("", "point = \"before-write\"").replace(
            "[server]\nkind = \"redis\"",
            "[server]\nkind = \"hazelcast\"\nnodes = 3\nrecord = true",
        );
        let err = parse(&text).unwrap_err();
        assert!(
            err.contains("s.toml")
                && err.contains("field `server.record`: server \"hazelcast\" has no watcher"),
            "{err}"
        );
    }

    #[test]
    fn unknown_scenario_name_lists_known_ones() {
        let err = find_scenario("no-such-scenario").unwrap_err().to_string();
        assert!(err.contains("no scenario of that name"), "{err}");
        assert!(err.contains("redis-baseline"), "{err}");
    }

    const ETCD: &str = r#"
name = "e"
[backend]
kind = "etcd"
[lock]
ttl_ms = 1000
[workload]
kind = "fenced-write"
clients = 2
duration_ms = 1000
[[nemesis]]
fault = "isolate"
nodes = "leader"
duration_ms = 500
"#;

    #[test]
    fn cluster_backends_default_to_three_members_and_accept_member_faults() {
        let s = parse(ETCD).unwrap();
        assert_eq!(s.nodes, 3);
        let isolate = &s.nemesis.faults[0].spec;
        assert_eq!(isolate.name(), "isolate");
        assert!(
            format!("{isolate:?}").contains("targets: Leader"),
            "{isolate:?}"
        );
        let zk = parse(&ETCD.replace("\"etcd\"", "\"zookeeper\"")).unwrap();
        assert_eq!(zk.server.name(), "zookeeper");
        assert_eq!(zk.client.kind.name(), "zookeeper");
    }

    #[test]
    fn member_faults_need_a_cluster_and_leader_needs_a_member_fault() {
        let err = parse(&ETCD.replace("\"etcd\"", "\"redis\"")).unwrap_err();
        assert!(
            err.contains("isolate cannot run on server \"redis\" (it acts on cluster members)"),
            "{err}"
        );
        let err = parse(&ETCD.replace("\"isolate\"", "\"partition\"")).unwrap_err();
        assert!(err.contains("unknown value \"leader\""), "{err}");
        let err = parse(&ETCD.replace("\"leader\"", "\"all\"")).unwrap_err();
        assert!(err.contains("isolates every member from nobody"), "{err}");
    }

    #[test]
    fn lease_and_session_limits_are_explained() {
        let err = parse(&ETCD.replace("ttl_ms = 1000", "ttl_ms = 1500")).unwrap_err();
        assert!(err.contains("etcd leases have a TTL in seconds"), "{err}");
        let zk = ETCD.replace("\"etcd\"", "\"zookeeper\"");
        let err = parse(&zk.replace("ttl_ms = 1000", "ttl_ms = 9000")).unwrap_err();
        assert!(err.contains("allowed: 500 to 5000"), "{err}");
        let err = parse(
            &ETCD
                .replace("[lock]", "[lock]\n")
                .replace("kind = \"etcd\"", "kind = \"etcd\"\nnodes = 2"),
        )
        .unwrap_err();
        assert!(err.contains("allowed: 1, 3, 5, 7"), "{err}");
    }

    #[test]
    fn the_known_bugs_folder_is_a_group_whose_name_picks_exactly_its_scenarios() {
        let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/known-bugs");
        let mut files: Vec<String> = std::fs::read_dir(&shipped)
            .expect("scenarios/known-bugs")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        files.sort();
        assert!(!files.is_empty());
        let entries = list_scenarios();
        // What `lockpick suite --filter known-bugs` selects: the qualified names with the text.
        let mut picked: Vec<String> = entries
            .iter()
            .filter(|e| e.qualified_name().contains("known-bugs"))
            .map(|e| e.name.clone())
            .collect();
        picked.sort();
        assert_eq!(picked, files);
        for entry in entries.iter().filter(|e| e.group.is_some()) {
            assert_eq!(entry.qualified_name(), format!("known-bugs/{}", entry.name));
            // Found by its plain name and by its qualified one.
            assert_eq!(find_scenario(&entry.name).unwrap(), entry.path);
            assert_eq!(find_scenario(&entry.qualified_name()).unwrap(), entry.path);
        }
        // The matrix files beside them are not scenarios.
        assert!(!entries
            .iter()
            .any(|e| e.path.parent().unwrap().ends_with("matrix")));
    }
}
