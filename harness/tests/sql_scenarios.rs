//! The shipped PostgreSQL and MariaDB scenarios, run for real against the server through the
//! embedded proxy: each must reach its expected verdict and show the findings that make it.

mod scenario_support;

use scenario_support::{
    assert_baseline_stats, assert_caused_by, assert_fence_held, assert_grants_around, assert_kinds,
    assert_pause_broke_the_lock, double_holder, expecting, history, run, run_min_ops,
};

use lockpick_checker::history::{EventKind, F};
use lockpick_checker::lock::FindingKind;
use lockpick_checker::verdict::Verdict;

/// The tokens of the granted acquires, in history order.
fn tokens(dir: &std::path::Path) -> Vec<u64> {
    history(dir)
        .into_iter()
        .filter(|e| e.f == F::Acquire && e.kind == EventKind::Ok)
        .filter_map(|e| e.value.token)
        .collect()
}

#[test]
fn pg_lease_row_baseline_is_valid_with_growing_tokens() {
    let (report, dir) = expecting(run("pg-lease-row-baseline"), Verdict::Valid);
    assert_baseline_stats(&report);
    let tokens = tokens(&dir);
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "{tokens:?}");
}

#[test]
fn pg_lease_row_gc_pause_shows_double_holder_and_accepted_stale_write() {
    let (report, _) = expecting(run("pg-lease-row-gc-pause"), Verdict::Invalid);
    assert_pause_broke_the_lock(&report);
}

#[test]
fn pg_lease_row_gc_pause_fenced_is_valid_and_the_fence_rejects_the_stale_write() {
    let (report, _) = expecting(run("pg-lease-row-gc-pause-fenced"), Verdict::Valid);
    assert_fence_held(&report);
    assert!(report.stats.writes_rejected > 0, "{report}");
}

#[test]
fn pg_lease_row_clock_jump_takes_the_row_from_a_live_holder() {
    let (report, _) = expecting(run("pg-lease-row-clock-jump"), Verdict::Invalid);
    assert_caused_by(double_holder(&report), F::Clock);
}

#[test]
fn pg_advisory_baseline_is_valid_with_growing_tokens() {
    let (report, dir) = expecting(run("pg-advisory-baseline"), Verdict::Valid);
    assert_baseline_stats(&report);
    let tokens = tokens(&dir);
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "{tokens:?}");
}

#[test]
fn pg_advisory_partition_between_holds_is_not_exposed_with_grants_on_both_sides() {
    let (_, dir) = expecting(run("pg-advisory-partition"), Verdict::NotExposed);
    assert_grants_around(&dir, F::Partition);
}

#[test]
fn pg_advisory_gc_pause_loses_the_lock_with_the_idle_session() {
    let (report, _) = expecting(run("pg-advisory-gc-pause"), Verdict::Invalid);
    assert_caused_by(double_holder(&report), F::Pause);
}

#[test]
fn pg_for_update_gc_pause_loses_the_row_with_the_idle_transaction() {
    let (report, _) = expecting(run("pg-for-update-gc-pause"), Verdict::Invalid);
    assert_caused_by(double_holder(&report), F::Pause);
}

#[test]
fn pg_restart_with_durable_commits_is_valid_with_grants_after_the_crash() {
    let (_, dir) = expecting(run("pg-restart"), Verdict::Valid);
    assert_grants_around(&dir, F::Crash);
}

#[test]
fn pg_restart_without_durable_commits_hands_out_old_tokens_again() {
    let (report, _) = expecting(run("pg-restart-no-fsync"), Verdict::Invalid);
    assert_kinds(&report.violations, &[FindingKind::StaleWrite], &report);
}

#[test]
fn mysql_lease_row_baseline_is_valid_with_growing_tokens() {
    let (report, dir) = expecting(run("mysql-lease-row-baseline"), Verdict::Valid);
    assert_baseline_stats(&report);
    let tokens = tokens(&dir);
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "{tokens:?}");
}

#[test]
fn mysql_lease_row_gc_pause_shows_double_holder_and_accepted_stale_write() {
    let (report, _) = expecting(run("mysql-lease-row-gc-pause"), Verdict::Invalid);
    assert_pause_broke_the_lock(&report);
}

#[test]
fn mysql_get_lock_gc_pause_loses_the_lock_with_the_idle_connection() {
    let (report, _) = expecting(run("mysql-get-lock-gc-pause"), Verdict::Invalid);
    assert_caused_by(double_holder(&report), F::Pause);
}

#[test]
fn mysql_for_update_gc_pause_loses_the_row_with_the_idle_connection() {
    let (report, _) = expecting(run("mysql-for-update-gc-pause"), Verdict::Invalid);
    assert_caused_by(double_holder(&report), F::Pause);
}

#[test]
fn mysql_lease_row_clock_jump_takes_the_row_from_a_live_holder() {
    // MariaDB's NOW(6) follows libfaketime: the jump expires a live holder's row.
    let (report, _) = expecting(run("mysql-lease-row-clock-jump"), Verdict::Invalid);
    assert_caused_by(double_holder(&report), F::Clock);
}

#[test]
fn mysql_restart_with_durable_commits_is_valid_with_grants_after_the_crash() {
    let (_, dir) = expecting(run("mysql-restart"), Verdict::Valid);
    assert_grants_around(&dir, F::Crash);
    let tokens = tokens(&dir);
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "{tokens:?}");
}

#[test]
fn mysql_restart_without_durable_commits_hands_out_old_ids_again() {
    let (report, dir) = expecting(run("mysql-restart-no-fsync"), Verdict::Invalid);
    assert_kinds(&report.violations, &[FindingKind::StaleWrite], &report);
    // The auto-increment counter came back older than ids already granted.
    let tokens = tokens(&dir);
    assert!(tokens.windows(2).any(|w| w[1] < w[0]), "{tokens:?}");
}

/// The failover events of a run's history: asserts there is one, completed without error, on
/// the primary n1 and the replica n2; returns when it began.
fn assert_one_failover(dir: &std::path::Path) -> u64 {
    use lockpick_checker::history::Process;
    let events = history(dir);
    let failovers: Vec<_> = events
        .iter()
        .filter(|e| e.process == Process::Nemesis && e.f == F::Failover)
        .collect();
    assert_eq!(failovers.len(), 2, "one invoke and its info: {failovers:?}");
    for e in &failovers {
        assert_eq!(e.value.nodes, ["n1", "n2"]);
        assert_eq!(e.error, None, "{e:?}");
    }
    failovers[0].time_ns
}

/// Runs failover scenario `name`, asserts it reached `want` with one failover and grants on
/// both sides of it; returns the report and the tokens granted before the failover began and
/// after it.
fn failover_run(
    name: &str,
    want: Verdict,
) -> (lockpick_checker::lock::LockReport, Vec<u64>, Vec<u64>) {
    let (report, dir) = expecting(run_min_ops(name, 2), want);
    let struck = assert_one_failover(&dir);
    let grants: Vec<_> = history(&dir)
        .into_iter()
        .filter(|e| e.f == F::Acquire && e.kind == EventKind::Ok)
        .filter_map(|e| Some((e.time_ns, e.value.token?)))
        .collect();
    let (before, after): (Vec<_>, Vec<_>) = grants.iter().partition(|(t, _)| *t < struck);
    let tokens = |v: Vec<&(u64, u64)>| v.into_iter().map(|(_, k)| *k).collect::<Vec<_>>();
    let (before, after) = (tokens(before), tokens(after));
    assert!(
        !before.is_empty() && !after.is_empty(),
        "grants before the failover: {before:?}, after: {after:?}"
    );
    (report, before, after)
}

#[test]
fn pg_lease_row_failover_to_an_async_replica_grants_a_lost_lease_again() {
    let (report, before, after) = failover_run("pg-lease-row-failover", Verdict::Invalid);
    assert_caused_by(double_holder(&report), F::Failover);
    // The promoted replica never saw the last grant: it hands out a token again.
    let last = before.iter().max().unwrap();
    assert!(after[0] <= *last, "before {before:?}, after {after:?}");
}

#[test]
fn pg_lease_row_failover_to_a_sync_replica_keeps_the_acknowledged_lease() {
    let (report, before, after) = failover_run("pg-lease-row-failover-sync", Verdict::Valid);
    assert_eq!(report.stats.max_concurrent_holders, 1, "{report}");
    // The promoted replica had applied every acknowledged grant: tokens go on from there.
    let last = before.iter().max().unwrap();
    assert!(
        after.iter().all(|t| t > last),
        "before {before:?}, after {after:?}"
    );
}
