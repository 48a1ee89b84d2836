//! Bad scenario files, each rebuilt here from a good one: every one is refused at load with an
//! error that names the file, the line and the field, and says what is allowed.

use lockpick_harness::scenario::{parse_scenario, Scenario};
use std::path::Path;

/// A good scenario: a redlock of five masters with a latency fault, so that node lists,
/// latency and lock fields all appear.
const GOOD: &str = r#"name = "good"
description = "a plain description"
expected = "valid"
seed = 3

[backend]
kind = "redlock"
nodes = 5

[lock]
name = "lock"
ttl_ms = 500

[workload]
kind = "fenced-write"
clients = 4
duration_ms = 2000
hold_ms = [1, 5]

[[nemesis]]
fault = "latency"
nodes = ["n1", "n2"]
latency_ms = 50
jitter_ms = 10
at_ms = 100
duration_ms = 300
"#;

fn parse(text: &str) -> Result<Scenario, String> {
    parse_scenario(Path::new("bad.toml"), text).map_err(|e| e.to_string())
}

/// `GOOD` with `from` replaced by `to` (which must occur once).
fn with(from: &str, to: &str) -> String {
    assert_eq!(GOOD.matches(from).count(), 1, "{from:?} once in GOOD");
    GOOD.replacen(from, to, 1)
}

/// Asserts the error names `bad.toml`, `line`, `field` and contains every `says`.
fn assert_refused(text: &str, line: usize, field: &str, says: &[&str]) {
    let err = parse(text).expect_err("a bad scenario is refused");
    let head = format!("load scenario bad.toml:{line}: field `{field}`: ");
    assert!(err.starts_with(&head), "want {head:?}…, got {err:?}");
    for s in says {
        assert!(err.contains(s), "want {s:?} in {err:?}");
    }
    assert!(
        !err.chars().any(|c| c.is_control()),
        "the error prints no control character: {err:?}"
    );
}

#[test]
fn the_good_scenario_loads() {
    let s = parse(GOOD).unwrap();
    assert_eq!(s.name, "good");
    assert_eq!(s.nemesis.faults.len(), 1);
}

const NAME_RULE: &str = "allowed: 1 to 100 of A-Z a-z 0-9 . _ -, not starting with .";

#[test]
fn scenario_names_that_are_not_plain_file_names_are_refused() {
    // Each would be a path out of the store, a nested folder, a forged output line, or a
    // name the file system refuses late.
    for name in [
        r#""../x""#,
        r#""/tmp/abs""#,
        r#""a/b""#,
        r#""..""#,
        r#"".hidden""#,
        r#""""#,
        r#""x\nlockpick: scenario forged with seed 0""#,
        r#""nul\u0000""#,
        r#""\u001b[31mred""#,
        &format!("\"{}\"", "n".repeat(300)),
    ] {
        assert_refused(
            &with(r#"name = "good""#, &format!("name = {name}")),
            1,
            "name",
            &[NAME_RULE],
        );
    }
}

#[test]
fn lock_names_must_be_one_plain_path_component() {
    for name in [r#""""#, r#""a/../b""#, r#""/locks""#, r#""k\r\n""#] {
        assert_refused(
            &with(r#"name = "lock""#, &format!("name = {name}")),
            11,
            "lock.name",
            &[NAME_RULE],
        );
    }
}

#[test]
fn descriptions_with_control_characters_are_refused() {
    for text in [r#""two\nlines""#, r#""\u001b]0;title\u0007""#] {
        assert_refused(
            &with(
                r#"description = "a plain description""#,
                &format!("description = {text}"),
            ),
            2,
            "description",
            &["allowed: at most 1000 printable characters, one line"],
        );
    }
}

#[test]
fn a_node_listed_twice_in_one_fault_is_refused() {
    assert_refused(
        &with(r#"nodes = ["n1", "n2"]"#, r#"nodes = ["n3", "n3"]"#),
        22,
        "nemesis.nodes",
        &["node \"n3\" is listed twice"],
    );
}

#[test]
fn numbers_out_of_range_name_their_field_and_the_range() {
    let cases: &[(&str, &str, usize, &str, &str)] = &[
        // Toxiproxy takes latency and jitter as int64 ms; these would overflow or panic it.
        (
            "latency_ms = 50",
            "latency_ms = 9223372036854775807",
            23,
            "nemesis.latency_ms",
            "allowed: 0 to 3600000",
        ),
        (
            "jitter_ms = 10",
            "jitter_ms = 9223372036854775807",
            24,
            "nemesis.jitter_ms",
            "allowed: 0 to 3600000",
        ),
        (
            "duration_ms = 300",
            "duration_ms = 1000000000000",
            26,
            "nemesis.duration_ms",
            "allowed: 0 to 3600000 ms",
        ),
        (
            "at_ms = 100",
            "at_ms = [0, 100000000000]",
            25,
            "nemesis.at_ms",
            "allowed: 0 to 86400000 ms",
        ),
        (
            "at_ms = 100",
            "at_ms = 100\nevery_ms = 0",
            26,
            "nemesis.every_ms",
            "allowed: 1 to 86400000 ms",
        ),
        (
            "at_ms = 100",
            "at_ms = 100\ncount = 0",
            26,
            "nemesis.count",
            "allowed: 1 to 1000000",
        ),
        (
            "clients = 4",
            "clients = 1000000",
            16,
            "workload.clients",
            "allowed: 1 to 1000",
        ),
        (
            "duration_ms = 2000",
            "duration_ms = 100000000000",
            17,
            "workload.duration_ms",
            "allowed: 1 to 86400000",
        ),
        (
            "hold_ms = [1, 5]",
            "hold_ms = [1, 5000000000]",
            18,
            "workload.hold_ms",
            "allowed: 0 to 3600000 ms",
        ),
        (
            "ttl_ms = 500",
            "ttl_ms = 500\nretry_delay_ms = [5, 999999999]",
            13,
            "lock.retry_delay_ms",
            "allowed: 0 to 60000 ms",
        ),
        (
            "nodes = 5",
            "nodes = 100",
            8,
            "backend.nodes",
            "allowed: 1 to 15",
        ),
    ];
    for (from, to, line, field, says) in cases {
        assert_refused(&with(from, to), *line, field, &[says]);
    }
}

/// A redlock clock fault on n1, for the clock-fault limits.
fn clock(fault: &str) -> String {
    with(
        "fault = \"latency\"\nnodes = [\"n1\", \"n2\"]\nlatency_ms = 50\njitter_ms = 10\n",
        &format!("{fault}\nnodes = [\"n1\"]\n"),
    )
}

#[test]
fn clock_strobe_period_has_a_minimum_and_offsets_a_maximum() {
    let strobe = |period: &str| {
        clock(&format!(
            "fault = \"clock-strobe\"\noffset_ms = 5000\n{period}"
        ))
    };
    assert_refused(
        &strobe("period_ms = 1"),
        23,
        "nemesis.period_ms",
        &["allowed: 10 to 3600000"],
    );
    assert!(parse(&strobe("period_ms = 10")).is_ok());
    assert_refused(
        &clock("fault = \"clock-jump\"\noffset_ms = -9223372036854775807"),
        22,
        "nemesis.offset_ms",
        &["allowed: -3155760000000 to 3155760000000 ms"],
    );
}

#[test]
fn a_schedule_too_large_to_draw_is_refused_naming_the_fault() {
    // A day of a 10 ms strobe: 8.6 million flips, drawn before the run starts.
    let text = clock("fault = \"clock-strobe\"\noffset_ms = 5000\nperiod_ms = 10")
        .replace("duration_ms = 2000", "duration_ms = 86400000")
        .replace(
            "duration_ms = 300",
            "duration_ms = 3600000\nevery_ms = 3600000",
        );
    assert_refused(
        &text,
        27,
        "nemesis.every_ms",
        &[
            "fault clock-strobe (line 20) can take",
            "allowed: at most 100000",
        ],
    );
    // The same with a recurring pause every millisecond for a day.
    let text = with(
        "fault = \"latency\"\nnodes = [\"n1\", \"n2\"]\nlatency_ms = 50\njitter_ms = 10\nat_ms = 100\nduration_ms = 300\n",
        "fault = \"client-pause\"\nevery_ms = 1\nduration_ms = 5\n",
    )
    .replace("duration_ms = 2000", "duration_ms = 86400000");
    assert_refused(&text, 22, "nemesis.every_ms", &["allowed: at most 100000"]);
}

#[test]
fn nemesis_entries_are_capped_and_each_keeps_its_line() {
    let entry = "\n[[nemesis]]\nfault = \"client-crash\"\nat_ms = 1500\n";
    let up_to = |n: usize| format!("{GOOD}{}", entry.repeat(n));
    let s = parse(&up_to(999)).expect("1000 entries load");
    assert_eq!(s.nemesis.faults.len(), 1000);
    // GOOD's fault is on line 20 and it has 26 lines; each added entry is 4 lines long,
    // from a blank line.
    let last = s.nemesis.faults.last().unwrap();
    assert_eq!(last.line, 28 + 4 * 998);
    assert_eq!(last.spec.name(), "client-crash");
    assert_refused(
        &up_to(1000),
        28 + 4 * 999,
        "nemesis",
        &["1001 [[nemesis]] entries; allowed: at most 1000"],
    );
}

#[test]
fn toml_and_type_errors_name_the_table_and_key() {
    let cases: &[(String, usize, &str, &str)] = &[
        (
            GOOD.replacen("name = \"good\"\n", "", 1),
            1,
            "name",
            "missing field `name`",
        ),
        (
            with("clients = 4\n", ""),
            14,
            "workload.clients",
            "missing field `clients`",
        ),
        (
            with("fault = \"latency\"\n", ""),
            20,
            "nemesis.fault",
            "missing field `fault`",
        ),
        (
            with("[backend]", "[backend"),
            6,
            "backend",
            "invalid table header",
        ),
        (with("name = \"good\"", "name = "), 1, "name", ""),
        (
            format!("{GOOD}[extra]\n"),
            27,
            "extra",
            "unknown field `extra`",
        ),
        (
            format!("{GOOD}x = 1\n"),
            27,
            "nemesis.x",
            "unknown field `x`",
        ),
        (
            with("hold_ms = [1, 5]", "hold_ms = [5, 1]"),
            18,
            "workload.hold_ms",
            "min above max",
        ),
        (
            with("[[nemesis]]", "[nemesis]"),
            20,
            "nemesis",
            "expected a sequence",
        ),
        (
            with("ttl_ms = 500", "ttl_ms = 500\nwatchdog = 3"),
            13,
            "lock.watchdog",
            "expected a boolean",
        ),
        (with("seed = 3", "seed = -3"), 4, "seed", "expected u64"),
        (with("[workload]", "[lock]"), 14, "lock", ""),
    ];
    for (text, line, field, says) in cases {
        assert_refused(text, *line, field, &[says]);
    }
}

#[test]
fn a_sql_session_setting_past_the_servers_limit_is_refused_at_load() {
    // A value the server refuses only when a session sets it, mid-run: refused at load instead,
    // naming the line, the field and the server's range. The shipped files load as they are.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    for (file, line, field, value, allowed) in [
        (
            "pg-for-update-gc-pause.toml",
            "idle_in_transaction_session_timeout_ms = 1000",
            "idle_in_transaction_session_timeout_ms",
            "9223372036854775807",
            "allowed: 0 to 2147483647",
        ),
        (
            "mysql-get-lock-gc-pause.toml",
            "wait_timeout_s = 1",
            "wait_timeout_s",
            "31536001",
            "allowed: 0 to 31536000",
        ),
    ] {
        let good = std::fs::read_to_string(root.join(file)).unwrap();
        assert!(parse_scenario(Path::new(file), &good).is_ok(), "{file}");
        assert_eq!(good.matches(line).count(), 1, "{line:?} once in {file}");
        let lineno = good.lines().position(|l| l == line).unwrap() + 1;
        let bad = good.replacen(line, &format!("{field} = {value}"), 1);
        let err = parse_scenario(Path::new(file), &bad)
            .expect_err("refused")
            .to_string();
        let head = format!("load scenario {file}:{lineno}: field `client.{field}`: ");
        assert!(err.starts_with(&head), "want {head:?}…, got {err:?}");
        assert!(err.contains(allowed) && err.contains(value), "{err}");
    }
}

#[test]
fn a_field_that_moved_to_the_client_table_says_where_it_went() {
    for (field, value) in [
        ("wait_replicas", "1"),
        ("wait_timeout_ms", "2000"),
        ("wait_release", "true"),
    ] {
        let text = format!(
            "name = \"old\"\n[backend]\nkind = \"redis-sentinel\"\n[lock]\nttl_ms = 15000\n{field} = {value}\n[workload]\nkind = \"fenced-write\"\nclients = 2\nduration_ms = 1000\n"
        );
        let err = parse_scenario(std::path::Path::new("old.toml"), &text)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!(
                "load scenario old.toml:6: field `lock.{field}`: `{field}` moved out of [lock]: it is an option of the client now: write [server] kind = \"redis-sentinel\" and [client] kind = \"sentinel-lock\""
            )),
            "{err}"
        );
    }
}

/// `GOOD` on the single-instance Redis lock, whose clients take many locks.
fn on_redis(workload_extra: &str) -> String {
    with(
        "[backend]\nkind = \"redlock\"\nnodes = 5",
        "[backend]\nkind = \"redis\"",
    )
    .replace(
        "[[nemesis]]\nfault = \"latency\"\nnodes = [\"n1\", \"n2\"]",
        "[[nemesis]]\nfault = \"latency\"\nnodes = [\"n1\"]",
    )
    .replace(
        "hold_ms = [1, 5]\n",
        &format!("hold_ms = [1, 5]\n{workload_extra}"),
    )
}

#[test]
fn many_locks_are_named_after_the_lock_and_refused_where_they_cannot_be_kept_apart() {
    let s = parse(&on_redis("locks = 3\n")).unwrap();
    assert_eq!(s.lock.count, 3);
    assert_eq!(s.lock.names(), ["lock-0", "lock-1", "lock-2"]);
    assert_eq!(parse(&on_redis("")).unwrap().lock.names(), ["lock"]);
    // The `locks` line is line 18 on redis (its [backend] has no `nodes`), 19 on redlock.
    assert_refused(
        &on_redis("locks = 0\n"),
        18,
        "workload.locks",
        &["0 is out of range; allowed: 1 to 100000"],
    );
    // Redlock takes many locks too.
    let redlock = parse(&with("hold_ms = [1, 5]\n", "hold_ms = [1, 5]\nlocks = 4\n")).unwrap();
    assert_eq!(redlock.lock.count, 4);
    // A client kind built for one lock name refuses, naming itself; no silent single lock.
    let zk = with(
        "[backend]\nkind = \"redlock\"\nnodes = 5",
        "[backend]\nkind = \"zookeeper\"\nnodes = 3",
    );
    assert_refused(
        &zk.replace("hold_ms = [1, 5]\n", "hold_ms = [1, 5]\nlocks = 4\n"),
        19,
        "workload.locks",
        &["4 locks: client \"", "takes one lock", "allowed: 1"],
    );
    assert_refused(
        &on_redis("locks = 4\n").replace("fenced-write", "counter"),
        18,
        "workload.locks",
        &[
            "counter workload has one counter",
            "allowed with counter: 1",
        ],
    );
    let long = "x".repeat(98);
    assert_refused(
        &on_redis("locks = 11\n").replace("name = \"lock\"", &format!("name = \"{long}\"")),
        18,
        "workload.locks",
        &["11 locks named after lock.name", "101 characters"],
    );
}

#[test]
fn a_lock_swapped_in_for_a_many_lock_scenario_must_take_many_locks() {
    use lockpick_harness::locks::find_lock;
    use lockpick_harness::scenario::check_overrides;
    let s = parse(&on_redis("locks = 16\n")).unwrap();
    check_overrides(&s, None, None).expect("redis-lock takes many locks");
    let (naive, _) = s.with_lock(find_lock("redis-naive").unwrap());
    check_overrides(&naive, None, None).expect("redis-naive takes many locks");
    let (zk, _) = s.with_lock(find_lock("zookeeper").unwrap());
    let err = check_overrides(&zk, None, None).unwrap_err();
    assert!(
        err.contains("16 locks") && err.contains("takes one lock") && err.contains("locks = 1"),
        "{err}"
    );
}

/// An etcd scenario whose `[server]` table is on lines 3–5, `version` on line 5.
fn etcd_with_version(version: &str) -> String {
    format!(
        "name = \"v\"\n\n[server]\nkind = \"etcd\"\nversion = {version:?}\n\n[client]\nkind = \"etcd\"\n\n[workload]\nkind = \"fenced-write\"\nclients = 2\nduration_ms = 1000\n"
    )
}

#[test]
fn a_server_version_must_be_one_of_the_kinds_list() {
    assert_refused(
        &etcd_with_version("3.5"),
        5,
        "server.version",
        &["unknown etcd version \"3.5\"", "allowed: 3.4 (Debian's etcd-server, the default), 3.6 (servers/etcd-3.6/bin/etcd, built by scripts/setup)"],
    );
    let picked = parse(&etcd_with_version("3.6")).expect("3.6 is on etcd's list");
    assert_eq!(picked.version.map(|v| v.name), Some("3.6"));
    assert_eq!(picked.server_label(), "etcd 3.6");
    let default = parse(&etcd_with_version("3.6").replace("version = \"3.6\"\n", ""))
        .expect("no version: the default");
    assert_eq!(default.version.map(|v| v.name), Some("3.4"));
}

#[test]
fn a_server_without_versions_refuses_one_naming_those_that_have_them() {
    assert_refused(
        &with("nodes = 5\n", "nodes = 5\nversion = \"7.0\"\n"),
        9,
        "backend.version",
        &[
            "server \"redis\" takes no version",
            "servers with versions: etcd, zookeeper",
        ],
    );
}
