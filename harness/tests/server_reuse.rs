//! Servers kept up across consecutive runs (`ServerPool::reusing`, what `lockpick matrix` does
//! by default), on real servers: a reset instance serves the next run as a fresh one would (no
//! lock key, row or token counter of the earlier run is left), each run records the instance
//! it used, and a fault a reset cannot undo (a node crash) makes the next run start its own.

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

#[test]
fn a_node_crash_makes_the_next_run_start_fresh_servers() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let store = tempfile::tempdir().unwrap();
    let crash = load_scenario("redlock-crash-no-persistence").unwrap();
    assert!(
        crash
            .nemesis
            .faults
            .iter()
            .any(|f| f.spec.name() == "node-crash"),
        "the scenario crashes a node"
    );
    let mut pool = ServerPool::reusing();
    let first = run(&rt, &mut pool, &crash, 1, store.path());
    let second = run(&rt, &mut pool, &without_faults(&crash), 1, store.path());
    rt.block_on(pool.close());
    let (a, b) = (instance(&first), instance(&second));
    assert_ne!(a.id, b.id, "servers a node crash hit were reused");
    assert_eq!(b.run, 1);
    let why = b.why_fresh.expect("the fresh start says why");
    assert!(why.contains("node-crash"), "{why}");
    assert!(
        a.pids.values().all(|p| !b.pids.values().any(|q| q == p)),
        "{:?} / {:?}",
        a.pids,
        b.pids
    );
}
