//! The Python adapters (clients/python: redis-py, kazoo, pottery, python-redis-lock) in whole
//! runs, as `lockpick scenario` runs them: redis-py's baseline keeps one holder, pottery and
//! python-redis-lock cannot save a stopped process (the woken holder's release fails not-owner),
//! python-redis-lock's renewal thread dies with a stopped process or a transient error and tells
//! nobody, and kazoo keeps one holder under latency near its session timeout but, its session
//! expired, releases ok a lock it lost and tells its holder LOST only after another process was
//! granted it. Also the client protocol from the side of a Python adapter: one that breaks the
//! protocol stops the run with a harness error and leaves no process behind, and one slow to
//! start does not eat the workload time; and the README's first adapter (docs/examples/
//! first-adapter, in Python, with a Node version whose files the same test checks) is the file
//! in the repo, its scenarios load, and its client pause makes a double holder.

mod scenario_support;

use lockpick_checker::history::{EventKind, Process, F};
use lockpick_checker::lock::Finding;
use lockpick_checker::verdict::Verdict;
use lockpick_harness::run::{run_scenario, RunError, RunOptions};
use lockpick_harness::scenario::parse_scenario;
use scenario_support::readme::{first_adapter_blocks, repo};
use scenario_support::{
    assert_baseline_stats, assert_caused_by, assert_zookeeper_library_told_lost, double_holder,
    expecting, history, run, run_min_ops,
};
use std::path::Path;
use tokio_util::sync::CancellationToken;

#[test]
fn python_redis_py_baseline_is_valid() {
    let (report, _) = expecting(run("python-redis-py-baseline"), Verdict::Valid);
    assert_baseline_stats(&report);
}

/// Live processes whose command line holds `needle`.
fn processes_with(needle: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let zombie = std::fs::read_to_string(entry.path().join("stat"))
            .map(|s| s.contains(") Z"))
            .unwrap_or(true);
        if !zombie && String::from_utf8_lossy(&cmdline).contains(needle) {
            found.push(pid);
        }
    }
    found
}

#[test]
fn an_adapter_that_breaks_the_protocol_stops_the_run_with_a_harness_error() {
    let folder = tempfile::tempdir().unwrap();
    // A copy of the broken fixture under a name no other test uses, to find leftovers by.
    let script = folder.path().join("garbage_adapter_for_runner.py");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/broken_adapter.py"),
        &script,
    )
    .unwrap();
    let path = folder.path().join("broken.toml");
    let text = r#"
name = "broken-adapter"
expected = "valid"
seed = 1

[server]
kind = "redis"

[client]
kind = "process"
command = ["python3", "./garbage_adapter_for_runner.py"]
init = { break = "garbage" }

[lock]
ttl_ms = 1000
acquire_timeout_ms = 1000
op_timeout_ms = 500

[workload]
kind = "fenced-write"
clients = 2
duration_ms = 60000
"#;
    std::fs::write(&path, text).unwrap();
    let scenario = parse_scenario(&path, text).unwrap();
    let store = tempfile::tempdir().unwrap();
    let opts = RunOptions {
        store: store.path().to_owned(),
        ..RunOptions::default()
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let started = std::time::Instant::now();
    let result = rt.block_on(run_scenario(&scenario, &opts, CancellationToken::new()));
    // Stopped at the break, not after the 60 s workload.
    assert!(started.elapsed() < std::time::Duration::from_secs(40));
    let Err(RunError::Adapter(error)) = result else {
        panic!("a protocol break is a harness error, not a verdict: {result:?}");
    };
    let message = error.to_string();
    assert!(message.contains("broke the client protocol"), "{message}");
    assert!(
        message.contains("the line it sent: this is not json"),
        "{message}"
    );
    assert!(
        message.contains("broken adapter: mode garbage"),
        "{message}"
    );
    // The history up to the break is kept, the broken acquire recorded as unknown.
    let run_dir = std::fs::read_dir(store.path().join("broken-adapter"))
        .unwrap()
        .flatten()
        .find(|e| e.file_name() != "latest")
        .unwrap()
        .path();
    let events = history(&run_dir);
    assert!(events
        .iter()
        .any(|e| matches!(e.process, Process::Client(_))
            && e.f == F::Acquire
            && e.kind == EventKind::Info
            && e.error.as_deref() == Some("protocol-error")));
    assert!(run_dir.join("clients/p0.stderr").is_file());
    drop(rt);
    assert_eq!(
        processes_with("garbage_adapter_for_runner.py"),
        Vec::<u32>::new(),
        "no adapter outlives the run"
    );
}

#[test]
fn kazoo_releases_ok_a_lock_its_expired_session_lost() {
    let (report, dir) = expecting(run("python-kazoo-session-expiry"), Verdict::Invalid);
    let finding = double_holder(&report);
    assert_caused_by(finding, F::Pause);
    // The paused process held first; ZooKeeper gave the lock to the other while it slept.
    let stale = Process::Client(finding.processes[0]);
    let events = history(&dir);
    let woke = finding.window.expect("a double holder has a window").end_ns;
    assert!(
        events.iter().any(|e| e.process == stale
            && e.f == F::Release
            && e.kind == EventKind::Ok
            && e.time_ns >= woke),
        "kazoo's release() says True for the node its session lost: {report}"
    );
}

/// The process that held first in `finding` answered a release after it woke with
/// `fail not-owner`: the library saw, too late, that its keys held another value.
fn stale_release_failed_not_owner(dir: &Path, report: &str, finding: &Finding) {
    let stale = Process::Client(finding.processes[0]);
    let woke = finding.window.expect("a double holder has a window").end_ns;
    assert!(
        history(dir).iter().any(|e| e.process == stale
            && e.f == F::Release
            && e.kind == EventKind::Fail
            && e.error.as_deref() == Some("not-owner")
            && e.time_ns >= woke),
        "the stopped holder's release fails not-owner after it woke: {report}"
    );
}

#[test]
fn pottery_redlock_cannot_save_a_stopped_process() {
    let (report, dir) = expecting(run("python-pottery-gc-pause"), Verdict::Invalid);
    let finding = double_holder(&report);
    assert_caused_by(finding, F::Pause);
    stale_release_failed_not_owner(&dir, &report.to_string(), finding);
}

#[test]
fn python_redis_lock_cannot_save_a_stopped_process() {
    let (report, dir) = expecting(run("python-redis-lock-gc-pause"), Verdict::Invalid);
    let finding = double_holder(&report);
    assert_caused_by(finding, F::Pause);
    stale_release_failed_not_owner(&dir, &report.to_string(), finding);
}

#[test]
fn a_slow_starting_adapter_does_not_eat_the_workload_time() {
    // Client 1's adapter says hello 2.5 s after it starts, past the 1.5 s workload: the
    // workload's clock (and the history's time 0) must wait for it.
    const SLOW_START_MS: u64 = 2500;
    const DURATION_MS: u64 = 1500;
    let folder = tempfile::tempdir().unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/broken_adapter.py"),
        folder.path().join("slow_adapter.py"),
    )
    .unwrap();
    let path = folder.path().join("slow.toml");
    let text = format!(
        r#"
name = "slow-adapter"
seed = 1

[server]
kind = "redis"

[client]
kind = "process"
command = ["python3", "./slow_adapter.py"]
init = {{ break = "none", slow_start_ms = {SLOW_START_MS}, slow_client = 1 }}

[workload]
kind = "fenced-write"
clients = 2
duration_ms = {DURATION_MS}
"#
    );
    std::fs::write(&path, &text).unwrap();
    let scenario = parse_scenario(&path, &text).unwrap();
    let store = tempfile::tempdir().unwrap();
    let opts = RunOptions {
        store: store.path().to_owned(),
        ..RunOptions::default()
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let outcome = rt
        .block_on(run_scenario(&scenario, &opts, CancellationToken::new()))
        .unwrap();
    assert!(outcome.results.workload_ms >= DURATION_MS);
    let events = history(&outcome.dir);
    for client in [0, 1] {
        let invokes: Vec<u64> = events
            .iter()
            .filter(|e| e.process == Process::Client(client) && e.kind == EventKind::Invoke)
            .map(|e| e.time_ns / 1_000_000)
            .collect();
        // Both start at the start line, the fast one too, and work until the end.
        let (first, last) = (invokes.first(), invokes.last());
        assert!(
            first.is_some_and(|&t| t < DURATION_MS / 2),
            "client {client}: first op at {first:?} ms of a {DURATION_MS} ms run"
        );
        assert!(
            last.is_some_and(|&t| t >= DURATION_MS * 2 / 3),
            "client {client}: last op at {last:?} ms of a {DURATION_MS} ms run"
        );
    }
}

#[test]
fn python_redis_lock_auto_renewal_stops_with_the_stopped_process() {
    let (report, dir) = expecting(
        run("python-redis-lock-auto-renewal-gc-pause"),
        Verdict::Invalid,
    );
    let finding = double_holder(&report);
    assert_caused_by(finding, F::Pause);
    stale_release_failed_not_owner(&dir, &report.to_string(), finding);
    // On waking, the library's renewal thread found the key gone and died of it, telling no one.
    let stderr =
        std::fs::read_to_string(dir.join(format!("clients/p{}.stderr", finding.processes[0])))
            .unwrap_or_default();
    assert!(
        stderr.contains("_lock_renewer") && stderr.contains("NotAcquired"),
        "{stderr}"
    );
}

/// docs/findings/python-redis-lock.md: no client is paused; the server is down around the
/// first holder's renewal, the renewal thread dies of the ConnectionError, and the key expires
/// under its live holder.
#[test]
fn python_redis_lock_renewal_thread_dies_of_a_transient_error_and_tells_nobody() {
    let (report, dir) = expecting(
        run_min_ops("python-redis-lock-renewal-dies", 5),
        Verdict::Invalid,
    );
    let finding = double_holder(&report);
    // The overlap starts after the server is back: what let the second grant in is the first
    // holder's lease running out (its renewal thread died), and the fault over that chain is
    // the crash that killed the renewal.
    assert!(
        finding.summary.contains("'s lease")
            && finding.summary.contains(" ran out at ")
            && finding.summary.contains("faults active: crash"),
        "{report}"
    );
    stale_release_failed_not_owner(&dir, &report.to_string(), finding);
    let stderr =
        std::fs::read_to_string(dir.join(format!("clients/p{}.stderr", finding.processes[0])))
            .unwrap_or_default();
    assert!(
        stderr.contains("_lock_renewer") && stderr.contains("ConnectionError"),
        "{stderr}"
    );
}

#[test]
fn kazoo_under_latency_near_the_session_timeout_keeps_one_holder() {
    let (report, dir) = expecting(run("python-kazoo-latency"), Verdict::Valid);
    assert_eq!(report.stats.max_concurrent_holders, 1, "{report}");
    // The latency was in force and healed, and grants went on after it.
    let events = history(&dir);
    let healed = events
        .iter()
        .find(|e| e.process == Process::Nemesis && e.f == F::Heal && e.kind == EventKind::Info)
        .expect("the latency is healed")
        .time_ns;
    assert!(events
        .iter()
        .any(|e| e.process == Process::Nemesis && e.f == F::Slow));
    assert!(
        events
            .iter()
            .any(|e| e.f == F::Acquire && e.kind == EventKind::Ok && e.time_ns > healed),
        "{report}"
    );
}

#[test]
fn the_readme_first_adapter_is_the_file_in_the_repo_and_its_scenario_loads() {
    let example = repo().join("docs/examples/first-adapter");
    let python = std::fs::read_to_string(example.join("adapter.py")).unwrap();
    let node = std::fs::read_to_string(example.join("node/adapter.js")).unwrap();
    assert_eq!(
        first_adapter_blocks("python"),
        std::slice::from_ref(&python)
    );
    assert_eq!(first_adapter_blocks("js"), [node]);
    // The README's scenario, as a user would save it beside the adapter, loads as it is.
    let [toml] = first_adapter_blocks("toml").try_into().unwrap();
    let mine = tempfile::tempdir().unwrap();
    std::fs::write(mine.path().join("adapter.py"), &python).unwrap();
    std::fs::write(
        mine.path().join("lockpick-adapter.json"),
        "{\"init\": {}}\n",
    )
    .unwrap();
    let path = mine.path().join("scenario.toml");
    std::fs::write(&path, &toml).unwrap();
    let scenario = parse_scenario(&path, &toml).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scenario.name, "my-first-adapter");
    // And the Node one in the repo.
    let node_scenario = example.join("node/scenario.toml");
    lockpick_harness::scenario::load_scenario(node_scenario.to_str().unwrap())
        .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn the_readme_first_adapter_runs_and_its_gc_pause_makes_a_double_holder() {
    let path = repo().join("docs/examples/first-adapter/scenario.toml");
    let (report, _) = expecting(run(path.to_str().unwrap()), Verdict::Invalid);
    assert_caused_by(double_holder(&report), F::Pause);
}

#[test]
fn kazoo_tells_its_holder_lost_when_zookeeper_expired_its_session() {
    assert_zookeeper_library_told_lost("python-kazoo-session-expiry");
}
