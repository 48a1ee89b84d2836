//! The shipped ZooKeeper scenarios, run for real against a three-server ensemble through the
//! embedded proxy: each must reach its expected verdict and show the findings that make it.

use lockpick_checker::history::{read_history, EventKind, Process, F};
use lockpick_checker::lock::{FindingKind, LockReport};
use lockpick_checker::verdict::Verdict;
use lockpick_harness::run::{run_scenario, RunOptions};
use lockpick_harness::scenario::load_scenario;
use std::path::PathBuf;
use std::sync::Mutex;
use tokio_util::sync::CancellationToken;

// Runs one at a time: they are timing experiments on a 2-core machine.
static SERIAL: Mutex<()> = Mutex::new(());

/// Runs `name`; the returned folder holds the run's store and is removed when dropped (a
/// cluster run keeps hundreds of MB of member data).
fn run(
    name: &str,
) -> (
    LockReport,
    Verdict,
    Option<Verdict>,
    PathBuf,
    tempfile::TempDir,
) {
    let _guard = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let scenario = load_scenario(name).expect("shipped scenario loads");
    let store = tempfile::tempdir().expect("temp dir");
    let opts = RunOptions {
        store: store.path().to_owned(),
        reproduce: format!("cargo run -- scenario {name}"),
        ..RunOptions::default()
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let outcome = rt
        .block_on(run_scenario(&scenario, &opts, CancellationToken::new()))
        .unwrap_or_else(|e| panic!("{name}: harness error: {e}"));
    let r = outcome.results;
    assert!(r.ops > 20, "{name}: only {} ops", r.ops);
    eprintln!("{name}: {}", r.lock);
    (r.lock, r.verdict, r.expected, outcome.dir, store)
}

fn kinds(findings: &[lockpick_checker::lock::Finding]) -> Vec<FindingKind> {
    findings.iter().map(|f| f.kind).collect()
}

/// Client operations that failed because the session had expired.
fn session_expiries(dir: &std::path::Path) -> usize {
    read_history(&dir.join("history.jsonl"))
        .unwrap()
        .iter()
        .filter(|e| {
            e.process != Process::Nemesis
                && e.kind == EventKind::Fail
                && e.error.as_deref() == Some("session-expired")
        })
        .count()
}

#[test]
fn zookeeper_baseline_is_valid_with_growing_tokens() {
    let (report, verdict, expected, _, _store) = run("zookeeper-baseline");
    assert_eq!(expected, Some(Verdict::Valid));
    assert_eq!(verdict, Verdict::Valid, "{report}");
    assert!(report.stats.acquires_ok > 50, "{report}");
    assert_eq!(report.stats.max_concurrent_holders, 1);
}

#[test]
fn zookeeper_session_expiry_shows_double_holder_stale_write_and_the_expiry() {
    let (report, verdict, expected, dir, _store) = run("zookeeper-session-expiry");
    assert_eq!(expected, Some(Verdict::Invalid));
    assert_eq!(verdict, Verdict::Invalid, "{report}");
    let v = kinds(&report.violations);
    assert!(v.contains(&FindingKind::DoubleHolder), "{report}");
    assert!(v.contains(&FindingKind::StaleWrite), "{report}");
    let double = report
        .violations
        .iter()
        .find(|f| f.kind == FindingKind::DoubleHolder)
        .unwrap();
    assert!(double.faults.iter().any(|w| w.f == F::Pause), "{double:?}");
    // The paused client learns of its expired session when it next talks to ZooKeeper.
    assert!(session_expiries(&dir) > 0, "no session expiry recorded");
}

#[test]
fn zookeeper_session_expiry_fenced_is_valid_and_the_fence_rejects_the_stale_write() {
    let (report, verdict, expected, dir, _store) = run("zookeeper-session-expiry-fenced");
    assert_eq!(expected, Some(Verdict::Valid));
    assert_eq!(verdict, Verdict::Valid, "{report}");
    let o = kinds(&report.observations);
    assert!(o.contains(&FindingKind::DoubleHolder), "{report}");
    assert!(o.contains(&FindingKind::RejectedStaleWrite), "{report}");
    assert!(session_expiries(&dir) > 0, "no session expiry recorded");
}

#[test]
fn zookeeper_partition_is_valid_and_a_server_was_isolated() {
    let (report, verdict, expected, dir, _store) = run("zookeeper-partition");
    assert_eq!(expected, Some(Verdict::Valid));
    assert_eq!(verdict, Verdict::Valid, "{report}");
    let events: Vec<_> = read_history(&dir.join("history.jsonl"))
        .unwrap()
        .into_iter()
        .filter(|e| e.process == Process::Nemesis)
        .collect();
    let cut = events
        .iter()
        .find(|e| e.f == F::Partition)
        .expect("a server was isolated");
    assert_eq!(cut.value.nodes.len(), 1);
    assert!(events
        .iter()
        .any(|e| e.f == F::Heal && e.value.nodes == cut.value.nodes));
    assert!(report.stats.acquires_ok > 20, "{report}");
}
