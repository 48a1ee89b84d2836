//! The shipped scenarios, run for real against redis-server through the embedded proxy: each
//! must reach its expected verdict and show the findings that make it.

use lockpick_checker::lock::{FindingKind, LockReport};
use lockpick_checker::verdict::Verdict;
use lockpick_harness::run::{run_scenario, RunOptions};
use lockpick_harness::scenario::load_scenario;
use std::sync::Mutex;
use tokio_util::sync::CancellationToken;

// Runs one at a time: they are timing experiments on a 2-core machine.
static SERIAL: Mutex<()> = Mutex::new(());

fn run(name: &str) -> (LockReport, Verdict, Option<Verdict>, std::path::PathBuf) {
    let _guard = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let scenario = load_scenario(name).expect("shipped scenario loads");
    let store = tempfile::tempdir().expect("temp dir").keep();
    let opts = RunOptions {
        store: store.clone(),
        reproduce: format!("cargo run -- scenario {name}"),
        ..RunOptions::default()
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let outcome = rt
        .block_on(run_scenario(&scenario, &opts, CancellationToken::new()))
        .unwrap_or_else(|e| panic!("{name}: harness error: {e}"));
    assert!(outcome.dir.join("results.json").is_file());
    assert!(
        outcome.results.ops > 20,
        "{name}: only {} ops",
        outcome.results.ops
    );
    let r = outcome.results;
    eprintln!("{name}: {}", r.lock);
    (r.lock, r.verdict, r.expected, outcome.dir)
}

fn kinds(findings: &[lockpick_checker::lock::Finding]) -> Vec<FindingKind> {
    findings.iter().map(|f| f.kind).collect()
}

#[test]
fn redis_baseline_is_valid() {
    let (report, verdict, expected, _) = run("redis-baseline");
    assert_eq!(verdict, Verdict::Valid, "{report}");
    assert_eq!(expected, Some(Verdict::Valid));
    assert!(report.stats.acquires_ok > 50, "{report}");
    assert_eq!(report.stats.max_concurrent_holders, 1);
}

#[test]
fn redis_gc_pause_shows_double_holder_and_accepted_stale_write() {
    let (report, verdict, expected, _) = run("redis-gc-pause");
    assert_eq!(verdict, Verdict::Invalid, "{report}");
    assert_eq!(expected, Some(Verdict::Invalid));
    let v = kinds(&report.violations);
    assert!(v.contains(&FindingKind::DoubleHolder), "{report}");
    assert!(v.contains(&FindingKind::StaleWrite), "{report}");
    let double = report
        .violations
        .iter()
        .find(|f| f.kind == FindingKind::DoubleHolder)
        .unwrap();
    assert!(
        double
            .faults
            .iter()
            .any(|w| w.f == lockpick_checker::history::F::Pause),
        "the pause that caused it is named: {double:?}"
    );
}

#[test]
fn redis_gc_pause_fenced_is_valid_and_shows_the_fence_working() {
    let (report, verdict, expected, _) = run("redis-gc-pause-fenced");
    assert_eq!(verdict, Verdict::Valid, "{report}");
    assert_eq!(expected, Some(Verdict::Valid));
    let o = kinds(&report.observations);
    assert!(o.contains(&FindingKind::DoubleHolder), "{report}");
    assert!(o.contains(&FindingKind::RejectedStaleWrite), "{report}");
    assert!(report.stats.writes_rejected > 0);
}

#[test]
fn redis_naive_crash_deadlocks() {
    let (report, verdict, expected, _) = run("redis-naive-crash");
    assert_eq!(verdict, Verdict::Invalid, "{report}");
    assert_eq!(expected, Some(Verdict::Invalid));
    assert!(
        kinds(&report.violations).contains(&FindingKind::Deadlock),
        "{report}"
    );
}

#[test]
fn redis_latency_is_valid_and_slower_under_latency() {
    let (report, verdict, expected, dir) = run("redis-latency");
    assert_eq!(verdict, Verdict::Valid, "{report}");
    assert_eq!(expected, Some(Verdict::Valid));
    // The latency really happened: acquires during the fault took longer than the injected
    // 2 × (50 − 30) ms round trip, while before it some were far faster.
    let events = lockpick_checker::history::read_history(&dir.join("history.jsonl")).unwrap();
    let windows = lockpick_checker::faults::fault_windows(&events);
    let slow = windows
        .iter()
        .find(|w| w.f == lockpick_checker::history::F::Slow)
        .expect("latency window recorded");
    let mut inside = Vec::new();
    let mut before = Vec::new();
    let mut open = std::collections::HashMap::new();
    for e in &events {
        if e.f != lockpick_checker::history::F::Acquire {
            continue;
        }
        match e.kind {
            lockpick_checker::history::EventKind::Invoke => {
                open.insert(e.process, e.time_ns);
            }
            lockpick_checker::history::EventKind::Ok => {
                if let Some(t0) = open.remove(&e.process) {
                    let took = e.time_ns - t0;
                    // The heal is recorded once the API confirmed it, a few ms after the
                    // toxics were gone: leave the window's last 200 ms out.
                    if t0 > slow.start_ns && e.time_ns + 200_000_000 < slow.end_ns {
                        inside.push(took);
                    } else if e.time_ns < slow.start_ns {
                        before.push(took);
                    }
                }
            }
            _ => {
                open.remove(&e.process);
            }
        }
    }
    let min_inside = inside
        .iter()
        .min()
        .copied()
        .expect("acquires during latency");
    assert!(
        min_inside >= 35_000_000,
        "fastest acquire under latency {min_inside} ns"
    );
    let min_before = before
        .iter()
        .min()
        .copied()
        .expect("acquires before latency");
    assert!(
        min_before < 10_000_000,
        "fastest acquire before latency {min_before} ns"
    );
}

#[test]
fn redis_watchdog_renews_leases_past_their_ttl_and_stays_valid() {
    let (report, verdict, expected, _) = run("redis-watchdog");
    assert_eq!(verdict, Verdict::Valid, "{report}");
    assert_eq!(expected, Some(Verdict::Valid));
    // Every hold outlives the 300 ms lease, so without renewals this could not be valid.
    assert!(
        report.stats.renews_ok >= report.stats.acquires_ok,
        "{report}"
    );
    assert!(report.stats.acquires_ok >= 3, "{report}");
}
