//! The shipped scenarios, run for real against redis-server through the embedded proxy: each
//! must reach its expected verdict and show the findings that make it.

mod scenario_support;

use lockpick_harness::scenario::load_scenario;
use scenario_support::{
    assert_baseline_stats, assert_caused_by, assert_fence_held, assert_pause_broke_the_lock,
    double_holder, expecting, history, kinds, run, run_in, run_min_ops,
};

use lockpick_checker::history::F;
use lockpick_checker::lock::{FindingKind, LockReport};
use lockpick_checker::verdict::Verdict;

#[test]
fn redis_baseline_is_valid() {
    let (report, _) = expecting(run("redis-baseline"), Verdict::Valid);
    assert_baseline_stats(&report);
}

#[test]
fn redis_gc_pause_shows_double_holder_and_accepted_stale_write() {
    let (report, _) = expecting(run("redis-gc-pause"), Verdict::Invalid);
    assert_pause_broke_the_lock(&report);
}

#[test]
fn external_servers_are_used_as_they_are_and_take_the_network_faults() {
    use lockpick_harness::backends::redis::RedisOptions;
    use lockpick_harness::processes::Supervisor;
    // redis-servers the run does not own stand in for a user's (or docker-compose's): one for
    // the lock, one for the resource, which still holds a max token from an earlier run.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let theirs = tempfile::tempdir().unwrap();
    let mut supervisor = Supervisor::new(theirs.path());
    let (lock_server, resource_server) = rt.block_on(async {
        let lock = supervisor.start_redis("users-lock", RedisOptions::default());
        let lock = lock.await.unwrap();
        let resource = supervisor.start_redis("users-resource", RedisOptions::default());
        (lock, resource.await.unwrap())
    });
    let query = |addr: std::net::SocketAddr, cmd: redis::Cmd| -> redis::Value {
        rt.block_on(async {
            let client = redis::Client::open(format!("redis://{addr}/")).unwrap();
            let mut con = client.get_multiplexed_async_connection().await.unwrap();
            cmd.query_async(&mut con).await.unwrap()
        })
    };
    let number = |v: redis::Value| -> u64 { redis::from_redis_value(v).expect("a number") };
    let mut seed = redis::cmd("SET");
    seed.arg("lockpick:resource:max-token").arg(1_000_000);
    query(resource_server.addr, seed);
    let (report, verdict, _, dir) = run_in(&rt, "redis-latency", 20, |o| {
        o.external = vec![lock_server.addr];
        o.resource = Some(resource_server.addr);
    });
    // No violation: the leftover token was cleared, or every write would have looked stale.
    // Not exposed: 50 ms of latency cannot make a grant outlast its TTL.
    assert_eq!(verdict, Verdict::NotExposed, "{report}");
    assert_latency_took_effect(&dir);
    for own in ["n1", "resource"] {
        assert!(
            !dir.join("nodes").join(own).exists(),
            "lockpick started its own {own}"
        );
    }
    // The grants were made on that server: its token counter counted them.
    let mut get = redis::cmd("GET");
    get.arg("lockpick:token:lock");
    let tokens = number(query(lock_server.addr, get));
    assert!(
        tokens >= report.stats.acquires_ok,
        "{tokens} tokens: {report}"
    );
    let mut get = redis::cmd("GET");
    get.arg("lockpick:resource:max-token");
    let max = number(query(resource_server.addr, get));
    assert!(max <= tokens, "max token {max} of {tokens}");
    rt.block_on(supervisor.stop_all());
}

#[test]
fn external_servers_refuse_faults_on_processes_and_clocks_before_anything_starts() {
    let addr: std::net::SocketAddr = "127.0.0.1:1".parse().unwrap();
    let five = vec![addr; 5];
    let crash = load_scenario("redlock-crash-no-persistence").unwrap();
    let err = crash.check_external(&five).unwrap_err();
    assert!(
        err.contains("node-crash") && err.contains("server processes"),
        "{err}"
    );
    let skew = load_scenario("redlock-clock-skew").unwrap();
    assert!(skew.check_external(&five).unwrap_err().contains("clock"));
    let latency = load_scenario("redis-latency").unwrap();
    latency.check_external(&[addr]).unwrap();
    let err = latency.check_external(&five).unwrap_err();
    assert!(
        err.contains("1 node(s)") && err.contains("names 5"),
        "{err}"
    );
    let failover = load_scenario("redis-failover-lost-lock").unwrap();
    assert!(failover
        .check_external(&[addr, addr])
        .unwrap_err()
        .contains("sentinel"));
    // The run refuses too, before it makes a store folder.
    let store = tempfile::tempdir().unwrap();
    let opts = lockpick_harness::run::RunOptions {
        store: store.path().to_owned(),
        external: five,
        ..Default::default()
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let outcome = rt.block_on(lockpick_harness::run::run_scenario(
        &crash,
        &opts,
        tokio_util::sync::CancellationToken::new(),
    ));
    assert!(outcome.is_err());
    assert_eq!(std::fs::read_dir(store.path()).unwrap().count(), 0);
}

#[test]
fn an_external_toxiproxy_gets_the_faults_and_keeps_other_users_proxies() {
    use lockpick_harness::proxy::{EmbeddedToxiproxy, FaultProxies};
    // A server the run does not own stands in for a user's Toxiproxy, with a proxy of
    // somebody else's named like one of the run's nodes.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (server, bystander) = rt.block_on(async {
        let server = EmbeddedToxiproxy::start("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        let theirs = FaultProxies::new(server.api_addr()).expect("client thread");
        theirs
            .create("n1", "127.0.0.1:9".parse().unwrap())
            .await
            .unwrap();
        (server, theirs)
    });
    let api = server.api_addr();
    let (report, verdict, _, dir) = run_in(&rt, "redis-latency", 20, |o| o.toxiproxy = Some(api));
    assert_eq!(verdict, Verdict::NotExposed, "{report}");
    // The latency went through the external server.
    assert_latency_took_effect(&dir);
    let left = rt
        .block_on(async move {
            tokio::task::spawn_blocking(move || toxiproxy_rust::client::Client::new(api).all())
                .await
        })
        .unwrap()
        .unwrap();
    let names: Vec<&String> = left.keys().collect();
    assert_eq!(
        names,
        ["n1"],
        "the run removed its proxies and only its own"
    );
    assert!(left["n1"].proxy_pack.toxics.is_empty());
    drop(bystander);
    rt.block_on(server.shutdown());
}

#[test]
fn redis_gc_pause_fenced_is_valid_and_shows_the_fence_working() {
    let (report, _) = expecting(run("redis-gc-pause-fenced"), Verdict::Valid);
    assert_fence_held(&report);
    assert!(report.stats.writes_rejected > 0);
}

#[test]
fn redis_naive_crash_deadlocks_and_is_stuck_not_unsafe() {
    // A deadlock is liveness: the run is stuck, with no safety violation.
    let (report, _) = expecting(run("redis-naive-crash"), Verdict::Stuck);
    assert!(
        report.violations.iter().all(|v| !v.kind.is_safety()),
        "{report}"
    );
    assert!(
        kinds(&report.violations).contains(&FindingKind::Deadlock),
        "{report}"
    );
}

#[test]
fn redis_latency_below_the_ttl_is_not_exposed_and_slower_under_latency() {
    let (_, dir) = expecting(run("redis-latency"), Verdict::NotExposed);
    assert_latency_took_effect(&dir);
}

/// Asserts the `latency` fault of redis-latency really happened: acquires while it was surely
/// in force took longer than the injected 2 × (50 − 30) ms round trip, while before it some
/// were far faster.
fn assert_latency_took_effect(dir: &std::path::Path) {
    use lockpick_checker::history::{EventKind, Process, F};
    let events = history(dir);
    let nemesis = |f: F, kind: EventKind| {
        events
            .iter()
            .find(|e| e.process == Process::Nemesis && e.f == f && e.kind == kind)
            .unwrap_or_else(|| panic!("no {f} {kind:?} in the history"))
            .time_ns
    };
    let slow_invoked = nemesis(F::Slow, EventKind::Invoke);
    let sure = scenario_support::surely_in_force(&events, F::Slow, F::Heal, &["n1"]);
    let &[(slow_from, slow_to)] = sure.as_slice() else {
        panic!("one latency stretch expected: {sure:?}");
    };
    let mut inside = Vec::new();
    let mut before = Vec::new();
    let mut open = std::collections::HashMap::new();
    for e in events.iter().filter(|e| e.f == F::Acquire) {
        match e.kind {
            EventKind::Invoke => {
                open.insert(e.process, e.time_ns);
            }
            EventKind::Ok => {
                if let Some(t0) = open.remove(&e.process) {
                    let took = e.time_ns - t0;
                    if t0 > slow_from && e.time_ns < slow_to {
                        inside.push(took);
                    } else if e.time_ns < slow_invoked {
                        before.push(took);
                    }
                }
            }
            _ => {
                open.remove(&e.process);
            }
        }
    }
    let min_inside = inside.iter().min().expect("acquires during latency");
    assert!(
        *min_inside >= 35_000_000,
        "fastest acquire under latency {min_inside} ns"
    );
    let min_before = before.iter().min().expect("acquires before latency");
    assert!(
        *min_before < 10_000_000,
        "fastest acquire before latency {min_before} ns"
    );
}

#[test]
fn redis_watchdog_renews_leases_past_their_ttl_and_stays_valid() {
    let (report, _) = expecting(run("redis-watchdog"), Verdict::Valid);
    // Every hold (1-1.4 s) outlives the 900 ms lease, so without renewals this could not be valid.
    assert!(
        report.stats.renews_ok >= report.stats.acquires_ok,
        "{report}"
    );
    assert!(report.stats.acquires_ok >= 3, "{report}");
}

#[test]
fn redlock_baseline_is_valid_with_majority_grants_and_no_tokens() {
    let (report, dir) = expecting(run("redlock-baseline"), Verdict::Valid);
    assert_baseline_stats(&report);
    let grants: Vec<_> = history(&dir)
        .into_iter()
        .filter(|e| {
            e.f == lockpick_checker::history::F::Acquire
                && e.kind == lockpick_checker::history::EventKind::Ok
        })
        .collect();
    for g in &grants {
        assert_eq!(g.value.token, None, "Redlock grants no fencing token");
        assert_eq!(g.value.per_node.len(), 5, "{g:?}");
        let oks = g.value.per_node.values().filter(|a| *a == "ok").count();
        assert!(oks >= 3, "granted without a majority: {g:?}");
        assert!(g.value.validity_ms.is_some_and(|v| v > 0), "{g:?}");
    }
}

#[test]
fn redlock_gc_pause_shows_double_holder_without_tokens() {
    let (report, _) = expecting(run("redlock-gc-pause"), Verdict::Invalid);
    let double = double_holder(&report);
    assert!(double.tokens.is_empty(), "Redlock has no token: {double:?}");
    assert!(double.summary.contains("no token"), "{}", double.summary);
    assert_caused_by(double, F::Pause);
    let scenario = load_scenario("redlock-gc-pause").unwrap();
    assert!(scenario.description.contains("no fencing token"));
}

/// Asserts that `node` was crashed and its restart had begun before the first double holder
/// began.
fn crash_restart_before_first_double_holder(
    report: &LockReport,
    dir: &std::path::Path,
    node: &str,
) {
    use lockpick_checker::history::{EventKind, Process, F};
    let double = double_holder(report);
    let start = double.window.unwrap().start_ns;
    let events = history(dir);
    // The restart's invoke, not its completion: the node grants as soon as it is up, which
    // can be a moment before the supervisor's readiness probe returns and the completion is
    // recorded.
    let nemesis_before = |f: F| {
        events.iter().any(|e| {
            e.process == Process::Nemesis
                && e.f == f
                && e.kind == EventKind::Invoke
                && e.value.nodes.iter().any(|n| n == node)
                && e.time_ns <= start
        })
    };
    assert!(
        nemesis_before(F::Crash),
        "{node} crashed before {start} ns: {double:?}"
    );
    assert!(
        nemesis_before(F::Restart),
        "{node} restarting before {start} ns: {double:?}"
    );
}

#[test]
fn redlock_crash_no_persistence_shows_double_holder_after_restart() {
    let (report, dir) = expecting(run("redlock-crash-no-persistence"), Verdict::Invalid);
    assert!(
        kinds(&report.violations).contains(&FindingKind::DoubleHolder),
        "{report}"
    );
    crash_restart_before_first_double_holder(&report, &dir, "n3");
}

#[test]
fn redlock_crash_delayed_restart_leaves_no_window_and_is_not_exposed() {
    let (report, dir) = expecting(run("redlock-crash-delayed-restart"), Verdict::NotExposed);
    assert_eq!(report.stats.max_concurrent_holders, 1);
    // The crash and the late restart really happened.
    let events = history(&dir);
    let nemesis = |f| {
        events.iter().find(|e| {
            e.process == lockpick_checker::history::Process::Nemesis
                && e.f == f
                && e.value.nodes == ["n3"]
        })
    };
    let crash = nemesis(lockpick_checker::history::F::Crash).expect("n3 crashed");
    let restart = nemesis(lockpick_checker::history::F::Restart).expect("n3 restarted");
    assert!(
        restart.time_ns - crash.time_ns >= 2_000_000_000,
        "restart delayed past the TTL"
    );
}

#[test]
fn redlock_crash_aof_always_is_valid() {
    let (report, dir) = expecting(run("redlock-crash-aof-always"), Verdict::Valid);
    assert_eq!(report.stats.max_concurrent_holders, 1);
    let restarts = history(&dir)
        .iter()
        .filter(|e| {
            e.process == lockpick_checker::history::Process::Nemesis
                && e.f == lockpick_checker::history::F::Restart
                && e.kind == lockpick_checker::history::EventKind::Info
                && e.value.nodes == ["n3"]
        })
        .count();
    assert!(
        restarts >= 3,
        "n3 crashed and restarted at once, repeatedly: {restarts}"
    );
}

/// The double holder found, and the clock faults active during it.
fn double_holder_under_clock_fault(report: &LockReport, node: &str) {
    let double = report
        .violations
        .iter()
        .find(|f| {
            f.kind == FindingKind::DoubleHolder
                && f.faults.iter().any(|w| {
                    w.f == lockpick_checker::history::F::Clock && w.nodes.iter().any(|n| n == node)
                })
        })
        .unwrap_or_else(|| panic!("no double holder during a clock fault on {node}: {report}"));
    assert_eq!(double.processes.len(), 2, "{double:?}");
}

#[test]
fn redlock_clock_skew_shows_double_holder_during_a_clock_jump() {
    let (report, _) = expecting(run("redlock-clock-skew"), Verdict::Invalid);
    double_holder_under_clock_fault(&report, "n3");
}

#[test]
fn redlock_clock_drift_shows_double_holder_under_a_fast_clock() {
    let (report, _) = expecting(run("redlock-clock-drift"), Verdict::Invalid);
    double_holder_under_clock_fault(&report, "n3");
}

/// The analyses' fault, not a crash: n4 and n5 keep running while every client is cut off
/// from them, so a grant made then is a bare majority of n1, n2 and n3 with n4 and n5 failing.
#[test]
fn redlock_clock_skew_partition_shows_double_holder_after_a_bare_majority_grant() {
    let (report, dir) = expecting(run("redlock-clock-skew-partition"), Verdict::Invalid);
    double_holder_under_clock_fault(&report, "n3");
    let events = history(&dir);
    assert!(events.iter().any(|e| e.f == F::Partition), "no partition");
    assert!(
        !events.iter().any(|e| e.f == F::Crash),
        "a node was crashed"
    );
    let bare_majority = acquires(&dir).into_iter().any(|e| {
        let answer = |n: &str| e.value.per_node.get(n).map(String::as_str);
        e.kind == lockpick_checker::history::EventKind::Ok
            && ["n1", "n2", "n3"].iter().all(|n| answer(n) == Some("ok"))
            && ["n4", "n5"]
                .iter()
                .all(|n| answer(n).is_some_and(|a| a != "ok"))
    });
    assert!(
        bare_majority,
        "no grant of n1..n3 alone while n4, n5 were cut off"
    );
}

#[test]
fn redis_clock_jump_expires_the_lock_under_its_holder() {
    let (report, _) = expecting(run("redis-clock-jump"), Verdict::Invalid);
    double_holder_under_clock_fault(&report, "n1");
}

#[test]
fn clock_fault_scenarios_leave_no_faketime_shm_files() {
    // Other tests may run clock faults at the same time (each test is a process of its own
    // under nextest): only a file left by a process that died, absent before this run and
    // still there a second later (after any other test's own clean-up), is this run's leftover.
    let before = stale_faketime_files();
    let _ = run("redis-clock-jump");
    let after = stale_faketime_files();
    std::thread::sleep(std::time::Duration::from_secs(1));
    let still = stale_faketime_files();
    let left: Vec<&String> = after
        .iter()
        .filter(|n| !before.contains(*n) && still.contains(*n))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// libfaketime's files in /dev/shm whose process is gone.
fn stale_faketime_files() -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.contains("faketime"))
        .filter(|n| {
            let pid = n.rsplit('_').next().unwrap_or("");
            !std::path::Path::new(&format!("/proc/{pid}")).exists()
        })
        .collect()
}

/// The acquire completions of a run's history.
fn acquires(dir: &std::path::Path) -> Vec<lockpick_checker::history::Event> {
    history(dir)
        .into_iter()
        .filter(|e| {
            e.f == lockpick_checker::history::F::Acquire
                && e.kind != lockpick_checker::history::EventKind::Invoke
        })
        .collect()
}

#[test]
fn redis_failover_lost_lock_shows_double_holder_on_the_promoted_replica() {
    // Long holds across a failover: few operations by design.
    let (report, dir) = expecting(run_min_ops("redis-failover-lost-lock", 5), Verdict::Invalid);
    let double = double_holder(&report);
    let crash = double
        .faults
        .iter()
        .find(|w| w.f == lockpick_checker::history::F::Crash)
        .unwrap_or_else(|| panic!("the master's crash is named: {double:?}"));
    assert_eq!(crash.nodes, ["n1"]);
    // The two holders were granted by different masters: n1, then the promoted n2.
    let masters: std::collections::BTreeSet<String> = acquires(&dir)
        .iter()
        .filter(|e| e.kind == lockpick_checker::history::EventKind::Ok)
        .filter_map(|e| e.value.note.clone())
        .collect();
    assert_eq!(
        masters.len(),
        2,
        "grants from the old and the new master: {masters:?}"
    );
}

/// The sentinels' promotion in a redis-sentinel run, from their logs: `master <old>` and
/// `master <new>` as the clients' grants note them (`+switch-master lockpick <old> <new>`).
fn switched_masters(
    dir: &std::path::Path,
    report: &LockReport,
) -> std::collections::BTreeSet<String> {
    let switch = ["s1", "s2", "s3"]
        .iter()
        .filter_map(|s| std::fs::read_to_string(dir.join("nodes").join(s).join("server.log")).ok())
        .find_map(|log| {
            log.lines().find_map(|l| {
                l.split_once("+switch-master lockpick ")
                    .map(|(_, a)| a.to_owned())
            })
        })
        .unwrap_or_else(|| panic!("a sentinel promoted the replica: {report}"));
    let addrs: Vec<&str> = switch.split_whitespace().collect();
    [
        format!("master {}:{}", addrs[0], addrs[1]),
        format!("master {}:{}", addrs[2], addrs[3]),
    ]
    .into()
}

/// Asserts a double holder caused by a fault `f`, the two holders granted by the sentinels' old
/// and new master, and no nemesis act but `f` and its heal.
fn assert_holders_on_both_masters(report: &LockReport, dir: &std::path::Path, f: F) {
    use lockpick_checker::history::{EventKind, Process};
    let events = history(dir);
    assert!(
        events
            .iter()
            .all(|e| e.process != Process::Nemesis || e.f == f || e.f == F::Heal),
        "no fault but the {f}"
    );
    let double = double_holder(report);
    assert_caused_by(double, f);
    let masters: std::collections::BTreeSet<String> = double
        .indices
        .iter()
        .filter_map(|i| events.iter().find(|e| e.index == *i))
        .filter(|e| e.f == F::Acquire && e.kind == EventKind::Ok)
        .filter_map(|e| e.value.note.clone())
        .collect();
    assert_eq!(
        masters,
        switched_masters(dir, report),
        "the two holders were granted by the old and the new master: {double:?}"
    );
}

#[test]
fn redis_sentinel_split_brain_grants_the_lock_on_both_masters_while_n1_is_isolated() {
    let (report, dir) = expecting(
        run_min_ops("redis-sentinel-split-brain", 2),
        Verdict::Invalid,
    );
    // The network split alone: n1 cut off from the replica and the three sentinels.
    let cut = history(&dir)
        .into_iter()
        .find(|e| e.f == F::Partition)
        .unwrap_or_else(|| panic!("the isolation is recorded: {report}"));
    assert_eq!(cut.value.nodes, ["n1"]);
    let note = cut.value.note.unwrap_or_default();
    assert!(note.ends_with("n1 and n2,s1,s2,s3"), "{note}");
    assert_holders_on_both_masters(&report, &dir, F::Partition);
}

#[test]
fn redis_sentinel_slow_master_fails_over_a_live_master_and_grants_the_lock_twice() {
    let (report, dir) = expecting(
        run_min_ops("redis-sentinel-slow-master", 2),
        Verdict::Invalid,
    );
    // Latency alone, on the sentinels' and the replica's links to n1, not the clients'.
    let slow = history(&dir)
        .into_iter()
        .find(|e| e.f == F::Slow)
        .unwrap_or_else(|| panic!("the latency is recorded: {report}"));
    assert_eq!(
        slow.value.nodes,
        ["s1-to-n1", "s2-to-n1", "s3-to-n1", "n2-to-n1"]
    );
    assert_holders_on_both_masters(&report, &dir, F::Slow);
}

#[test]
fn redis_failover_wait_keeps_acknowledged_grants_across_the_failover() {
    let (report, dir) = expecting(run_min_ops("redis-failover-wait", 5), Verdict::Valid);
    let granted: Vec<_> = acquires(&dir)
        .into_iter()
        .filter(|e| e.kind == lockpick_checker::history::EventKind::Ok)
        .collect();
    assert!(!granted.is_empty(), "{report}");
    for g in &granted {
        assert_eq!(
            g.value.replicas_acked,
            Some(1),
            "kept only when acknowledged: {g:?}"
        );
    }
    assert!(
        history(&dir).iter().any(|e| {
            e.process == lockpick_checker::history::Process::Nemesis
                && e.f == lockpick_checker::history::F::Crash
                && e.value.nodes == ["n1"]
        }),
        "the master was killed"
    );
}

#[test]
fn redlock_node_pause_of_a_minority_is_not_exposed_and_really_stops_those_masters() {
    let (report, dir) = expecting(run("redlock-node-pause"), Verdict::NotExposed);
    assert_eq!(report.stats.max_concurrent_holders, 1);
    let events = history(&dir);
    use lockpick_checker::history::F;
    let pauses = scenario_support::surely_in_force(&events, F::Pause, F::Resume, &["n2", "n4"]);
    assert!(pauses.len() >= 2, "{pauses:?}");
    // Grants during a pause came from the other three; the paused two did not answer.
    let during: Vec<_> = events
        .iter()
        .filter(|e| {
            e.f == F::Acquire
                && e.kind == lockpick_checker::history::EventKind::Ok
                && pauses
                    .iter()
                    .any(|&(from, to)| from + 100_000_000 < e.time_ns && e.time_ns < to)
        })
        .collect();
    assert!(!during.is_empty(), "no grant while paused");
    for g in during {
        for n in ["n2", "n4"] {
            // A request on an open connection times out (info); a new connection's handshake
            // times out before the SET is sent (fail).
            let answer = &g.value.per_node[n];
            assert!(
                answer == "info: timeout"
                    || (answer.starts_with("fail: connect to ") && answer.ends_with(": timeout")),
                "{g:?}"
            );
        }
    }
}

/// Every client operation of a many-lock run names one of the scenario's locks, and the run
/// spread its operations over most of them.
fn assert_spread_over_locks(dir: &std::path::Path, count: usize, report: &LockReport) {
    use lockpick_checker::history::Process;
    let names: Vec<String> = (0..count).map(|i| format!("lock-{i}")).collect();
    let mut used = std::collections::BTreeSet::new();
    for e in history(dir) {
        if let (Process::Client(_), F::Acquire | F::Release | F::Write | F::Renew) =
            (e.process, e.f)
        {
            let lock = e.lock.expect("every lock operation names its lock");
            assert!(
                names.contains(&lock),
                "{lock} is not one of the run's locks"
            );
            used.insert(lock);
        }
    }
    assert!(
        used.len() > count / 2,
        "only {} of {count} locks used",
        used.len()
    );
    // results.json counts per lock, one row per lock used.
    assert_eq!(report.per_lock.len(), used.len(), "{:?}", report.per_lock);
    let ops: u64 = report.per_lock.iter().map(|c| c.ops).sum();
    let s = &report.stats;
    assert_eq!(
        ops,
        s.acquires_ok
            + s.acquires_fail
            + s.acquires_info
            + s.releases_ok
            + s.releases_fail
            + s.releases_info
            + s.renews_ok
            + s.renews_fail
            + s.renews_info
            + s.writes_ok
            + s.writes_rejected
            + s.writes_fail
            + s.writes_info
    );
}

#[test]
fn redis_many_locks_is_valid_with_holders_of_different_locks_at_once() {
    let (report, dir) = expecting(run("redis-many-locks"), Verdict::Valid);
    assert_spread_over_locks(&dir, 64, &report);
    // 16 clients over 64 locks hold different locks at once; no lock has two holders.
    assert_eq!(report.stats.max_concurrent_holders, 1, "{report}");
    assert!(report.per_lock.iter().all(|c| c.violations == 0));
}

#[test]
fn redis_many_locks_gc_pause_finds_the_double_holder_on_the_paused_lock() {
    let (report, dir) = expecting(run("redis-many-locks-gc-pause"), Verdict::Invalid);
    assert_spread_over_locks(&dir, 8, &report);
    assert_pause_broke_the_lock(&report);
    // Each violation is about one lock, and the per-lock table puts a lock with violations
    // first.
    for v in &report.violations {
        assert!(
            v.lock.as_deref().is_some_and(|l| l.starts_with("lock-")),
            "{v:?}"
        );
    }
    assert!(report.per_lock[0].violations > 0, "{:?}", report.per_lock);
    let counted: u64 = report.per_lock.iter().map(|c| c.violations).sum();
    assert_eq!(
        counted,
        report.violations.len() as u64 + report.omitted_violations
    );
}
