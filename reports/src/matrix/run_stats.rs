//! One run of a cell, reduced to what the matrix aggregates: verdict, whether its fault reached
//! its size, time to first violation, availability, acquire latency and throughput.

use super::record::{RunSummary, MATRIX_VERSION};
use crate::quantiles::quantile;
use crate::view::{Outcome, RunView};
use lockpick_checker::exposure::{exposures, Plan};
use lockpick_checker::history::{Event, EventKind, Process, F};
use lockpick_checker::lock::Property;
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
pub fn summarize_run(place: RunPlace, r: &RunResults, events: &[Event], plan: Plan) -> RunSummary {
    let exposure = exposures(events, plan);
    let (exposed_instances, instances) = exposure.count();
    let reach = exposure.summary();
    // Times count from the workload's start: the first client operation.
    let start_ns = events
        .iter()
        .find(|e| matches!(e.process, Process::Client(_)))
        .map_or(0, |e| e.time_ns);
    // The earliest of the lock checks' findings and the moment the linearizability check
    // found the history could no longer be linearized (a violation it alone sees, such as a
    // grant that contradicts an earlier one without two holders overlapping in time).
    // Safety violations only: a deadlock's stretch is liveness, shown as the cell's STUCK.
    let first_violation_ms = r
        .lock
        .violations
        .iter()
        .filter(|v| v.kind.is_safety())
        .filter_map(|v| v.window.as_ref().map(|w| w.start_ns))
        .chain(
            r.linearizability
                .as_ref()
                .filter(|_| r.lock.property == Property::Exclusive)
                .and_then(|l| l.violated_at_ns),
        )
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
        exposed_by: reach.as_ref().ok().cloned(),
        not_exposed: reach.err(),
        exposed_instances: exposure.planned.then_some((exposed_instances, instances)),
        // A non-linearizable lock history is a violation too, under the exclusive property
        // only (under `fenced` the fence absorbs a broken lease, as the run's verdict says:
        // `RunChecks::verdict`); a deadlock is not one.
        violations: safety_violations(&r.lock)
            + u64::from(
                r.lock.property == Property::Exclusive
                    && r.linearizability
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
        server_version: r
            .server
            .as_ref()
            .and_then(|s| s.version.is_some().then(|| s.describe())),
        recheck: None,
        runtime_stall_ms: None,
    }
}

/// The safety violations of a lock report, listed or counted; deadlocks left out. Results
/// written before violations were counted by kind count the listed ones by kind and every
/// omitted one.
fn safety_violations(lock: &lockpick_checker::lock::LockReport) -> u64 {
    if lock.violation_counts.is_empty() {
        return lock
            .violations
            .iter()
            .filter(|v| v.kind.is_safety())
            .count() as u64
            + lock.omitted_violations;
    }
    lock.violation_counts
        .iter()
        .filter(|c| c.kind.is_safety())
        .map(|c| c.count)
        .sum()
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
        not_exposed: None,
        exposed_by: None,
        exposed_instances: None,
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
        server_version: None,
        recheck: None,
        runtime_stall_ms: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockpick_checker::history::{Value, FORMAT_VERSION};
    use lockpick_checker::lock::{check_locks, LockCheckParams};
    use lockpick_checker::results::{LinSummary, RESULTS_VERSION};
    use lockpick_checker::verdict::Verdict;

    const MS: u64 = 1_000_000;

    fn event(index: u64, ms: u64, kind: EventKind, f: F, token: Option<u64>) -> Event {
        Event {
            v: FORMAT_VERSION,
            index,
            time_ns: ms * MS,
            process: Process::Client(0),
            kind,
            f,
            lock: Some("l".into()),
            value: Value {
                token,
                lease_ms: Some(1000),
                ..Value::default()
            },
            error: None,
        }
    }

    #[test]
    fn a_violation_only_the_linearizability_check_found_has_its_time() {
        // One clean hold, starting 100 ms into the history: the lock checks find nothing.
        let events = vec![
            event(0, 100, EventKind::Invoke, F::Acquire, None),
            event(1, 105, EventKind::Ok, F::Acquire, Some(1)),
            event(2, 150, EventKind::Invoke, F::Release, None),
            event(3, 155, EventKind::Ok, F::Release, None),
        ];
        let params = LockCheckParams {
            property: Property::Exclusive,
            deadlock_ms: 0,
        };
        let lock = check_locks(&events, &params);
        assert!(lock.violations.is_empty());
        let mut results = RunResults {
            v: RESULTS_VERSION,
            scenario: "s".to_owned(),
            backend: "redis".to_owned(),
            seed: 1,
            verdict: Verdict::Invalid,
            expected: None,
            interrupted: false,
            workload_ms: 155,
            ops: 2,
            history: "history.jsonl".to_owned(),
            reproduce: String::new(),
            lock,
            linearizability: Some(LinSummary {
                model: "lease".to_owned(),
                verdict: Verdict::Invalid,
                elapsed_ms: 0.1,
                ops: 2,
                explanation: Some("…".to_owned()),
                unknown_reason: None,
                violated_at_ns: Some(150 * MS),
            }),
            not_exposed: None,
            exposed_by: None,
            exposures: None,
            server: None,
            discipline: None,
            library: None,
            description: None,
        };
        let plan = Plan::none();
        let run = summarize_run(RunPlace::default(), &results, &events, plan.clone());
        assert_eq!(run.violations, 1);
        // Counted from the workload's first operation, like the lock checks' findings.
        assert_eq!(run.first_violation_ms, Some(50.0));

        // Under `fenced` the lease model's violation is what the fence absorbs: the run is
        // valid (RunChecks::verdict), so it counts no violation and has no first one.
        let mut fenced = results.clone();
        fenced.lock.property = Property::Fenced;
        fenced.verdict = Verdict::Valid;
        let run = summarize_run(RunPlace::default(), &fenced, &events, plan.clone());
        assert_eq!((run.violations, run.first_violation_ms), (0, None));

        // A violation that could not be narrowed down to an operation has no time.
        results.linearizability.as_mut().unwrap().violated_at_ns = None;
        let run = summarize_run(RunPlace::default(), &results, &events, plan);
        assert_eq!((run.violations, run.first_violation_ms), (1, None));
    }
}
