//! Servers kept up across consecutive runs (`ServerPool::reusing`, what `lockpick matrix` does
//! by default), on real servers: a reset instance serves the next run as a fresh one would (no
//! lock key, row or token counter of the earlier run is left), each run records the instance
//! it used, a fault that stopped, cut or restarted members is waited out before the reset
//! (the members agree again), and a fault a reset cannot undo (a moved clock) makes the next
//! run start its own.

mod scenario_support;

use lockpick_checker::history::{read_history, Event, EventKind, Process, F};
use lockpick_checker::verdict::Verdict;
use lockpick_harness::run::{run_scenario_in, RunOptions, RunOutcome, ServerPool};
use lockpick_harness::scenario::{load_scenario, Scenario};
use lockpick_store::{RunState, ServerInstance};
use std::path::Path;
use tokio_util::sync::CancellationToken;

/// Runs `scenario` at `seed` on servers from `pool`, in `store`.
fn run(
    rt: &tokio::runtime::Runtime,
    pool: &mut ServerPool,
    scenario: &Scenario,
    seed: u64,
    store: &Path,
) -> RunOutcome {
    let opts = RunOptions {
        seed: Some(seed),
        store: store.to_owned(),
        reproduce: format!("cargo run -- scenario {} --seed {seed}", scenario.name),
        ..RunOptions::default()
    };
    rt.block_on(run_scenario_in(
        scenario,
        &opts,
        CancellationToken::new(),
        pool,
    ))
    .unwrap_or_else(|e| panic!("{} seed {seed}: harness error: {e}", scenario.name))
}

/// The server instance a run recorded in its `run.json`.
fn instance(outcome: &RunOutcome) -> ServerInstance {
    RunState::read(&outcome.dir)
        .expect("run.json reads")
        .expect("run.json exists")
        .server_instance
        .expect("run.json names the server instance")
}

fn history(outcome: &RunOutcome) -> Vec<Event> {
    read_history(&outcome.dir.join("history.jsonl")).expect("history reads")
}

/// The fencing tokens granted in a run, in the order the grants were recorded.
fn granted_tokens(outcome: &RunOutcome) -> Vec<u64> {
    history(outcome)
        .iter()
        .filter(|e| {
            matches!(e.process, Process::Client(_)) && e.f == F::Acquire && e.kind == EventKind::Ok
        })
        .filter_map(|e| e.value.token)
        .collect()
}

fn grants(outcome: &RunOutcome) -> usize {
    history(outcome)
        .iter()
        .filter(|e| {
            matches!(e.process, Process::Client(_)) && e.f == F::Acquire && e.kind == EventKind::Ok
        })
        .count()
}

/// `scenario` without its faults and expectation: a plain workload on the same servers.
fn without_faults(scenario: &Scenario) -> Scenario {
    let mut plain = scenario.clone();
    plain.nemesis.faults.clear();
    plain.expected = None;
    plain
}

#[test]
fn a_lock_key_left_forever_does_not_leak_into_the_next_run_on_the_same_redis() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let store = tempfile::tempdir().unwrap();
    let mut pool = ServerPool::reusing();
    // Run 1: a client crashes holding a lock without TTL; its key stays for good (STUCK).
    let crash = load_scenario("redis-naive-crash").unwrap();
    let first = run(&rt, &mut pool, &crash, 1, store.path());
    assert_eq!(
        first.results.verdict,
        Verdict::Stuck,
        "the key was not left"
    );
    // Run 2 on the same server: without a reset that key would block every client.
    let second = run(&rt, &mut pool, &without_faults(&crash), 2, store.path());
    rt.block_on(pool.close());
    let (a, b) = (instance(&first), instance(&second));
    assert_eq!(a.id, b.id, "the second run did not reuse the servers");
    assert_eq!((a.run, b.run), (1, 2));
    assert_eq!(a.pids, b.pids);
    assert_eq!(
        b.started_in,
        first.dir.file_name().unwrap().to_string_lossy()
    );
    assert_eq!(
        second.results.verdict,
        Verdict::Valid,
        "{}",
        second.results.lock
    );
    assert!(
        grants(&second) > 20,
        "the reused server granted only {} locks",
        grants(&second)
    );
}

#[test]
fn the_token_counter_starts_again_at_1_on_a_reset_redis_postgres_and_mariadb() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let store = tempfile::tempdir().unwrap();
    for name in [
        "redis-baseline",
        "pg-advisory-baseline",
        "mysql-lease-row-baseline",
    ] {
        let scenario = load_scenario(name).unwrap();
        let mut pool = ServerPool::reusing();
        let runs: Vec<RunOutcome> = (1..=3)
            .map(|seed| run(&rt, &mut pool, &scenario, seed, store.path()))
            .collect();
        rt.block_on(pool.close());
        let ids: Vec<String> = runs.iter().map(|r| instance(r).id).collect();
        assert!(ids.iter().all(|i| *i == ids[0]), "{name}: {ids:?}");
        let served: Vec<u32> = runs.iter().map(|r| instance(r).run).collect();
        assert_eq!(served, [1, 2, 3], "{name}");
        let clients = scenario.workload.clients as u64;
        let mut last_max = None;
        for (k, r) in runs.iter().enumerate() {
            let tokens = granted_tokens(r);
            // Enough grants to show the order; how many a run makes is the machine's load.
            assert!(tokens.len() >= 10, "{name} run {}: {tokens:?}", k + 1);
            // A fresh counter's first grant is token 1 (MariaDB's auto-increment may skip an
            // id or a few that a racing insert took and lost: never more than one per client).
            // A counter left from the run before would start past that run's last token.
            let min = *tokens.iter().min().unwrap();
            assert!(
                min <= clients,
                "{name} run {}: first tokens {:?}",
                k + 1,
                &tokens[..5]
            );
            if let Some(before) = last_max {
                assert!(min < before, "{name} run {}: {min} after {before}", k + 1);
            }
            last_max = tokens.iter().max().copied();
            assert_eq!(
                r.results.verdict,
                Verdict::Valid,
                "{name}: {}",
                r.results.lock
            );
        }
    }
}

#[test]
fn etcd_tokens_keep_growing_across_runs_on_a_reset_cluster_and_never_collide() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let store = tempfile::tempdir().unwrap();
    let scenario = load_scenario("etcd-baseline").unwrap();
    let mut pool = ServerPool::reusing();
    let first = run(&rt, &mut pool, &scenario, 1, store.path());
    let second = run(&rt, &mut pool, &scenario, 2, store.path());
    rt.block_on(pool.close());
    assert_eq!(instance(&first).id, instance(&second).id);
    let (a, b) = (granted_tokens(&first), granted_tokens(&second));
    assert!(a.len() > 10 && b.len() > 10, "{a:?} {b:?}");
    // The revision cannot be reset: the second run's tokens start past the first run's.
    assert!(
        b.iter().min() > a.iter().max(),
        "tokens collide across runs: {:?} / {:?}",
        a.iter().max(),
        b.iter().min()
    );
    for r in [&first, &second] {
        assert_eq!(r.results.verdict, Verdict::Valid, "{}", r.results.lock);
    }
}

/// Runs `scenario` (whose faults stop, cut or restart members) and then a plain run on the
/// same pool, and checks that the second kept the servers after waiting for the members:
/// the same instance, its second run, the wait recorded, the plain run valid with grants.
fn kept_after_members_settled(name: &str, fault: &str) -> (ServerInstance, ServerInstance) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let store = tempfile::tempdir().unwrap();
    let faulty = load_scenario(name).unwrap();
    assert!(
        faulty.nemesis.faults.iter().any(|f| f.spec.name() == fault),
        "{name} has a {fault}"
    );
    let mut pool = ServerPool::reusing();
    let first = run(&rt, &mut pool, &faulty, 1, store.path());
    let second = run(&rt, &mut pool, &without_faults(&faulty), 1, store.path());
    rt.block_on(pool.close());
    let (a, b) = (instance(&first), instance(&second));
    assert_eq!(a.id, b.id, "{name}: not kept: {:?}", b.why_fresh);
    assert_eq!((a.run, b.run), (1, 2), "{name}");
    assert!(
        a.settle_ms.is_none(),
        "{name}: a fresh start settles nothing"
    );
    let settled = b.settle_ms.expect("the members were waited for");
    assert!(
        settled <= b.reset_ms,
        "{name}: {settled} ms of {} ms",
        b.reset_ms
    );
    assert_eq!(
        second.results.verdict,
        Verdict::Valid,
        "{name}: {}",
        second.results.lock
    );
    assert!(grants(&second) > 5, "{name}: {} grants", grants(&second));
    (a, b)
}

#[test]
fn a_crashed_redlock_node_comes_back_empty_and_its_servers_serve_the_next_run() {
    let (a, b) = kept_after_members_settled("redlock-crash-no-persistence", "node-crash");
    // The crashed nodes (the scenario crashes n3, n4 and n5) were restarted: new processes;
    // the others are the same.
    let moved: Vec<&str> = (a.pids.keys())
        .filter(|n| a.pids[*n] != b.pids[*n])
        .map(String::as_str)
        .collect();
    assert_eq!(moved, ["n3", "n4", "n5"], "{:?} / {:?}", a.pids, b.pids);
}

#[test]
fn a_killed_etcd_leader_is_waited_for_and_its_cluster_serves_the_next_run() {
    let (a, b) = kept_after_members_settled("etcd-kill-leader", "node-crash");
    let moved = (a.pids.keys()).filter(|n| a.pids[*n] != b.pids[*n]).count();
    assert_eq!(moved, 1, "{:?} / {:?}", a.pids, b.pids);
}

#[test]
fn an_isolated_zookeeper_leader_is_waited_for_and_its_ensemble_serves_the_next_run() {
    let (a, b) = kept_after_members_settled("zookeeper-partition", "isolate");
    assert_eq!(a.pids, b.pids, "no member was restarted");
}

#[test]
fn a_moved_clock_makes_the_next_run_start_fresh_servers() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let store = tempfile::tempdir().unwrap();
    let jump = load_scenario("redis-clock-jump").unwrap();
    assert!(
        jump.nemesis
            .faults
            .iter()
            .any(|f| f.spec.name() == "clock-jump"),
        "the scenario moves a clock"
    );
    let mut pool = ServerPool::reusing();
    let first = run(&rt, &mut pool, &jump, 1, store.path());
    // The same setup (nodes under libfaketime), which a run without the fault would not be.
    let second = run(&rt, &mut pool, &jump, 2, store.path());
    rt.block_on(pool.close());
    let (a, b) = (instance(&first), instance(&second));
    assert_ne!(a.id, b.id, "servers whose clock moved were reused");
    assert_eq!(b.run, 1);
    let why = b.why_fresh.expect("the fresh start says why");
    assert!(why.contains("clock-jump"), "{why}");
    assert!(
        a.pids.values().all(|p| !b.pids.values().any(|q| q == p)),
        "{:?} / {:?}",
        a.pids,
        b.pids
    );
}
