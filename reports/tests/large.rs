//! Reports of long runs stay small and quick: synthetic histories of 1k, 10k and 100k
//! operations, each with stale writes under client pauses and latency faults.

mod support;

use lockpick_checker::history::{Event, EventKind};
use lockpick_reports::render_run_report;
use std::time::Instant;
use support::{results_for, synthetic_history};

/// The promise to the user: no multi-megabyte page, however long the run.
const MAX_REPORT_BYTES: usize = 1_000_000;

fn measure(ops: usize) -> (usize, f64, Vec<Event>) {
    let events = synthetic_history(ops, 8);
    let results = results_for(&events, &format!("synthetic-{ops}"));
    assert!(
        !results.lock.violations.is_empty(),
        "the synthetic run has stale writes"
    );
    let started = Instant::now();
    let html = render_run_report(&results, &events).unwrap();
    let secs = started.elapsed().as_secs_f64();
    if let Ok(dir) = std::env::var("LOCKPICK_REPORT_SAMPLE_DIR") {
        std::fs::write(format!("{dir}/synthetic-{ops}.html"), &html).unwrap();
    }
    eprintln!(
        "report of {ops} ops ({} events): {} bytes, rendered in {secs:.3} s",
        events.len(),
        html.len()
    );
    (html.len(), secs, events)
}

#[test]
fn reports_of_1k_10k_and_100k_ops_stay_under_a_megabyte() {
    for ops in [1_000, 10_000, 100_000] {
        let (bytes, _, events) = measure(ops);
        let completed = events
            .iter()
            .filter(|e| e.process.client().is_some() && e.kind != EventKind::Invoke)
            .count();
        assert!(completed >= ops, "{completed} < {ops}");
        assert!(
            bytes < MAX_REPORT_BYTES,
            "report of {ops} ops is {bytes} bytes"
        );
    }
}
