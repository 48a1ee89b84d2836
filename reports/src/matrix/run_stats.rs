//! One run of a cell, reduced to what the matrix aggregates: verdict, whether its fault reached
//! its size, time to first violation, availability, acquire latency and throughput.

use super::reach::{fault_reach, Needs};
use super::record::{RunSummary, MATRIX_VERSION};
use crate::quantiles::quantile;
use crate::view::{Outcome, RunView};
use lockpick_checker::history::{Event, EventKind, Process, F};
use lockpick_checker::results::RunResults;

/// Where a run sits in the matrix and how to find and repeat it.
#[derive(Debug, Clone, Default)]
pub struct RunPlace {
    pub row: String,
    pub column: String,
    pub seed: u64,
    /// The run folder, relative to the store root.
    pub run: Option<String>,
    pub reproduce: String,
    pub secs: f64,
}

/// Summarizes a checked run from its results and history.
pub fn summarize_run(
    place: RunPlace,
    r: &RunResults,
    events: &[Event],
    needs: Needs,
) -> RunSummary {
    let reach = fault_reach(events, needs);
    // Times count from the workload's start: the first client operation.
    let start_ns = events
        .iter()
        .find(|e| matches!(e.process, Process::Client(_)))
        .map_or(0, |e| e.time_ns);
    let first_violation_ms = r
        .lock
        .violations
        .iter()
        .filter_map(|v| v.window.as_ref().map(|w| w.start_ns))
        .min()
        .map(|ns| ns.saturating_sub(start_ns) as f64 / 1e6);
    let view = RunView::new(events);
    let mut lat: Vec<f64> = view
        .ops
        .iter()
        .filter(|o| o.f == F::Acquire && o.outcome == Outcome::Ok)
        .map(|o| o.latency_ms())
        .collect();
    lat.sort_by(f64::total_cmp);
    let leases: Vec<u64> = events
        .iter()
        .filter(|e| e.f == F::Acquire && e.kind == EventKind::Ok)
        .filter_map(|e| e.value.lease_ms)
        .collect();
    let s = &r.lock.stats;
    RunSummary {
        v: MATRIX_VERSION,
        row: place.row,
        column: place.column,
        seed: place.seed,
        verdict: Some(r.verdict.name().to_owned()),
        error: None,
        reached: reach.as_ref().ok().cloned(),
        not_tested: reach.err(),
        // A non-linearizable lock history is a violation too, though it has no time window.
        violations: r.lock.violations.len() as u64
            + r.lock.omitted_violations
            + u64::from(
                r.linearizability
                    .as_ref()
                    .is_some_and(|l| l.verdict == lockpick_checker::verdict::Verdict::Invalid),
            ),
        first_violation_ms,
        acquires_ok: s.acquires_ok,
        acquires_tried: s.acquires_ok + s.acquires_fail + s.acquires_info,
        p50_ms: (!lat.is_empty()).then(|| quantile(&lat, 0.5)),
        p99_ms: (!lat.is_empty()).then(|| quantile(&lat, 0.99)),
        ops_per_sec: r.ops_per_sec(),
        lease_ms: leases
            .iter()
            .min()
            .zip(leases.iter().max())
            .map(|(a, b)| (*a, *b)),
        run: place.run,
        reproduce: place.reproduce,
        secs: place.secs,
        library: None,
    }
}

/// A run the harness could not make.
pub fn failed_run(place: RunPlace, error: String) -> RunSummary {
    RunSummary {
        v: MATRIX_VERSION,
        row: place.row,
        column: place.column,
        seed: place.seed,
        verdict: None,
        error: Some(error),
        not_tested: None,
        reached: None,
        violations: 0,
        first_violation_ms: None,
        acquires_ok: 0,
        acquires_tried: 0,
        p50_ms: None,
        p99_ms: None,
        ops_per_sec: 0.0,
        lease_ms: None,
        run: place.run,
        reproduce: place.reproduce,
        secs: place.secs,
        library: None,
    }
}
