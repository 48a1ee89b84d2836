//! The shipped ZooKeeper scenarios, run for real against a three-server ensemble through the
//! embedded proxy: each must reach its expected verdict and show the findings that make it.

mod scenario_support;

use scenario_support::{kinds, run};

use lockpick_checker::history::{read_history, EventKind, Process, F};
use lockpick_checker::lock::FindingKind;
use lockpick_checker::verdict::Verdict;

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
    let (report, verdict, expected, _) = run("zookeeper-baseline");
    assert_eq!(expected, Some(Verdict::Valid));
    assert_eq!(verdict, Verdict::Valid, "{report}");
    assert!(report.stats.acquires_ok > 50, "{report}");
    assert_eq!(report.stats.max_concurrent_holders, 1);
}

#[test]
fn zookeeper_session_expiry_shows_double_holder_stale_write_and_the_expiry() {
    let (report, verdict, expected, dir) = run("zookeeper-session-expiry");
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
    let (report, verdict, expected, dir) = run("zookeeper-session-expiry-fenced");
    assert_eq!(expected, Some(Verdict::Valid));
    assert_eq!(verdict, Verdict::Valid, "{report}");
    let o = kinds(&report.observations);
    assert!(o.contains(&FindingKind::DoubleHolder), "{report}");
    assert!(o.contains(&FindingKind::RejectedStaleWrite), "{report}");
    assert!(session_expiries(&dir) > 0, "no session expiry recorded");
}

#[test]
fn zookeeper_partition_is_valid_and_a_server_was_isolated() {
    let (report, verdict, expected, dir) = run("zookeeper-partition");
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
