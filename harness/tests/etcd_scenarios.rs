//! The shipped etcd scenarios, run for real against a three-member etcd cluster through the
//! embedded proxy: each must reach its expected verdict and show the findings that make it.

mod scenario_support;

use scenario_support::{
    assert_baseline_stats, assert_fence_held, assert_pause_broke_the_lock, assert_server_ran,
    expecting, history, run,
};

use lockpick_checker::history::{EventKind, Process, F};
use lockpick_checker::verdict::Verdict;

/// The faults of the run's history that took effect (nemesis completions without an error),
/// as (verb, nodes, note).
fn nemesis_events(dir: &std::path::Path) -> Vec<(F, Vec<String>, Option<String>)> {
    history(dir)
        .into_iter()
        .filter(|e| e.process == Process::Nemesis && e.kind == EventKind::Info && e.error.is_none())
        .map(|e| (e.f, e.value.nodes, e.value.note))
        .collect()
}

#[test]
fn etcd_baseline_is_valid_with_growing_tokens() {
    let (report, dir) = expecting(run("etcd-baseline"), Verdict::Valid);
    assert_baseline_stats(&report);
    // No `version`: Debian's etcd, as the members report it.
    assert_server_ran(&dir, "etcd", "3.4");
}

#[test]
fn etcd_3_6_baseline_runs_etcd_3_6_and_is_valid() {
    let (report, dir) = expecting(run("etcd-3.6-baseline"), Verdict::Valid);
    assert_baseline_stats(&report);
    assert_server_ran(&dir, "etcd", "3.6");
}

#[test]
fn etcd_gc_pause_shows_double_holder_and_accepted_stale_write() {
    let (report, _) = expecting(run("etcd-gc-pause"), Verdict::Invalid);
    assert_pause_broke_the_lock(&report);
}

#[test]
fn etcd_gc_pause_fenced_is_valid_and_the_fence_rejects_the_stale_write() {
    let (report, _) = expecting(run("etcd-gc-pause-fenced"), Verdict::Valid);
    assert_fence_held(&report);
    assert!(report.stats.writes_rejected > 0, "{report}");
}

#[test]
fn etcd_partition_leader_is_valid_and_the_leader_was_isolated() {
    let (_, dir) = expecting(run("etcd-partition-leader"), Verdict::Valid);
    let events = nemesis_events(&dir);
    let cut = events
        .iter()
        .find(|(f, _, _)| *f == F::Partition)
        .expect("the leader was isolated");
    assert_eq!(cut.1.len(), 1, "{cut:?}");
    assert!(
        cut.2.as_deref().is_some_and(|n| n.contains("the leader")),
        "{cut:?}"
    );
    assert!(events.iter().any(|(f, n, _)| *f == F::Heal && *n == cut.1));
    scenario_support::assert_grants_around(&dir, F::Partition);
}

#[test]
fn etcd_kill_leader_is_valid_and_the_leader_was_killed_and_restarted() {
    let (_, dir) = expecting(run("etcd-kill-leader"), Verdict::Valid);
    let events = nemesis_events(&dir);
    let crash = events
        .iter()
        .find(|(f, _, _)| *f == F::Crash)
        .expect("the leader was killed");
    assert!(events
        .iter()
        .any(|(f, n, _)| *f == F::Restart && *n == crash.1));
    scenario_support::assert_grants_around(&dir, F::Crash);
}

#[test]
fn etcd_3_6_kill_leader_is_valid_and_the_leader_was_killed_and_restarted() {
    let (_, dir) = expecting(run("etcd-3.6-kill-leader"), Verdict::Valid);
    let events = nemesis_events(&dir);
    let crash = events
        .iter()
        .find(|(f, _, _)| *f == F::Crash)
        .expect("the leader was killed");
    assert!(events
        .iter()
        .any(|(f, n, _)| *f == F::Restart && *n == crash.1));
    scenario_support::assert_grants_around(&dir, F::Crash);
    // The version is read before the workload: the restarted member is the same build.
    assert_server_ran(&dir, "etcd", "3.6");
}

#[test]
fn etcd_lock_service_baseline_is_valid_with_growing_tokens() {
    let (report, dir) = expecting(run("etcd-lock-service-baseline"), Verdict::Valid);
    assert_baseline_stats(&report);
    // The tokens are the create revisions of the keys the server-side Lock returned.
    let tokens: Vec<u64> = history(&dir)
        .into_iter()
        .filter(|e| e.f == F::Acquire && e.kind == EventKind::Ok)
        .filter_map(|e| e.value.token)
        .collect();
    assert!(tokens.len() > 5, "{tokens:?}");
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "{tokens:?}");
}

#[test]
fn etcd_lock_service_gc_pause_shows_double_holder_and_accepted_stale_write() {
    let (report, _) = expecting(run("etcd-lock-service-gc-pause"), Verdict::Invalid);
    assert_pause_broke_the_lock(&report);
}
