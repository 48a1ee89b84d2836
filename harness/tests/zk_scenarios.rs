//! The shipped ZooKeeper scenarios, run for real against a three-server ensemble through the
//! embedded proxy: each must reach its expected verdict (the partition one may instead be STUCK,
//! liveness, never a safety violation: see its test) and show the findings that make it.

mod scenario_support;

use scenario_support::{
    assert_baseline_stats, assert_fence_held, assert_pause_broke_the_lock, assert_server_ran,
    expecting, history, run,
};

use lockpick_checker::history::{EventKind, Process, F};
use lockpick_checker::verdict::Verdict;

/// Client operations that failed because the session had expired.
fn session_expiries(dir: &std::path::Path) -> usize {
    history(dir)
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
    let (report, dir) = expecting(run("zookeeper-baseline"), Verdict::Valid);
    assert_baseline_stats(&report);
    // No `version`: Debian's ZooKeeper, as its `srvr` reports it.
    assert_server_ran(&dir, "zookeeper", "3.8");
}

#[test]
fn zookeeper_3_9_baseline_runs_zookeeper_3_9_and_is_valid() {
    let (report, dir) = expecting(run("zookeeper-3.9-baseline"), Verdict::Valid);
    assert_baseline_stats(&report);
    assert_server_ran(&dir, "zookeeper", "3.9");
}

#[test]
fn zookeeper_session_expiry_shows_double_holder_stale_write_and_the_expiry() {
    let (report, dir) = expecting(run("zookeeper-session-expiry"), Verdict::Invalid);
    assert_pause_broke_the_lock(&report);
    // The paused client learns of its expired session when it next talks to ZooKeeper.
    assert!(session_expiries(&dir) > 0, "no session expiry recorded");
}

#[test]
fn zookeeper_session_expiry_fenced_is_valid_and_the_fence_rejects_the_stale_write() {
    let (report, dir) = expecting(run("zookeeper-session-expiry-fenced"), Verdict::Valid);
    assert_fence_held(&report);
    assert!(session_expiries(&dir) > 0, "no session expiry recorded");
}

#[test]
fn zookeeper_partition_keeps_one_holder_and_a_server_was_isolated() {
    let (report, verdict, expected, dir) = run("zookeeper-partition");
    assert_eq!(expected, Some(Verdict::Valid));
    // What this scenario tests is exclusivity across a leader cut. ZooKeeper's recovery from
    // it can leave the lock without a grant for longer than the deadlock threshold (a new
    // election, then the retired holder's session runs a full timeout under the new leader:
    // the scenario file's comment), which is liveness: STUCK, never a safety violation.
    assert!(
        matches!(verdict, Verdict::Valid | Verdict::Stuck),
        "{verdict:?}: {report}"
    );
    assert!(
        report.violations.iter().all(|f| !f.kind.is_safety()),
        "{report}"
    );
    let events: Vec<_> = history(&dir)
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
    if verdict == Verdict::Valid {
        scenario_support::assert_grants_around(&dir, F::Partition);
    }
}

#[test]
fn zookeeper_3_9_session_expiry_shows_double_holder_stale_write_and_the_expiry() {
    let (report, dir) = expecting(run("zookeeper-3.9-session-expiry"), Verdict::Invalid);
    assert_pause_broke_the_lock(&report);
    assert!(session_expiries(&dir) > 0, "no session expiry recorded");
    assert_server_ran(&dir, "zookeeper", "3.9");
}
