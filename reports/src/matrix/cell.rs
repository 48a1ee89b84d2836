//! A cell's runs aggregated into what the matrix shows: safety violations in k of N runs, or
//! deadlocks (liveness, `STUCK`) in k of N, or safe in
//! the runs that a fault exposed, or "not exposed", or "n/a"; with the time to first
//! violation, availability, latency and throughput, and whether it disagrees with the
//! expectation.

use super::note::CellNote;
use super::record::{CellExplore, CellStatus, CellSummary, Rate, RunSummary};

/// What a cell is, before its runs.
#[derive(Debug, Clone, Default)]
pub struct CellHead {
    pub row: String,
    pub column: String,
    /// `valid`, `invalid`, `stuck` or `n/a`.
    pub expected: String,
    pub expected_why: String,
    /// The matrix file's note on the cell.
    pub note: Option<CellNote>,
    /// Why the row's setup cannot test this fault (the matrix file says so): not tested,
    /// whatever runs were made.
    pub declared_not_tested: Option<String>,
    pub not_applicable: Option<String>,
    /// Why lockpick cannot bring the fault to this row's servers here, though the lock could
    /// meet it.
    pub not_injectable: Option<String>,
    pub sizes: Vec<String>,
    pub lease_ms: u64,
    pub lease_from: String,
    pub scenario_file: Option<String>,
}

/// Aggregates `runs` (this cell's, any order) under `head`.
pub fn aggregate(head: CellHead, mut runs: Vec<RunSummary>) -> CellSummary {
    runs.sort_by_key(|r| r.seed);
    let verdict_is = |r: &RunSummary, v: &str| r.verdict.as_deref() == Some(v);
    let violating = runs.iter().filter(|r| verdict_is(r, "invalid")).count() as u64;
    let stuck = runs.iter().filter(|r| verdict_is(r, "stuck")).count() as u64;
    let checked = runs.iter().filter(|r| r.verdict.is_some()).count() as u64;
    let tested = runs
        .iter()
        .filter(|r| verdict_is(r, "valid") && r.not_exposed.is_none())
        .count() as u64;
    let (_, counted) = safety_counts(&runs);
    let status = if let Some(why) = &head.not_applicable {
        CellStatus::NotApplicable(why.clone())
    } else if let Some(why) = &head.not_injectable {
        CellStatus::NotInjectable(why.clone())
    } else if let Some(why) = &head.declared_not_tested {
        CellStatus::Untestable(why.clone())
    } else if runs.is_empty() {
        CellStatus::NotRun
    } else if violating > 0 {
        CellStatus::Unsafe {
            k: violating,
            n: counted,
        }
    } else if stuck > 0 {
        // Liveness, not safety: a deadlock is never shown as unsafe.
        CellStatus::Stuck {
            k: stuck,
            n: checked,
        }
    } else if tested > 0 {
        CellStatus::Safe { tested }
    } else if let Some(r) = runs
        .iter()
        .find(|r| r.error.is_some() || verdict_is(r, "unknown"))
    {
        CellStatus::Unknown(match &r.error {
            Some(e) => format!("seed {}: failed to {e}", r.seed),
            None => format!("seed {}: the check could not decide", r.seed),
        })
    } else {
        let why = runs
            .iter()
            .find_map(|r| r.not_exposed.clone())
            .unwrap_or_else(|| "no run reached the fault".to_owned());
        CellStatus::NotExposed(why)
    };
    let mismatch = disagrees(&status, &head.expected);
    let mut first: Vec<f64> = runs.iter().filter_map(|r| r.first_violation_ms).collect();
    first.sort_by(f64::total_cmp);
    let mut p50s: Vec<f64> = runs.iter().filter_map(|r| r.p50_ms).collect();
    p50s.sort_by(f64::total_cmp);
    let p99 = runs.iter().filter_map(|r| r.p99_ms).reduce(f64::max);
    let made: Vec<&RunSummary> = runs.iter().filter(|r| r.verdict.is_some()).collect();
    CellSummary {
        row: head.row,
        column: head.column,
        status,
        expected: head.expected,
        expected_why: head.expected_why,
        note: head.note,
        mismatch,
        violating_runs: violating,
        runs_made: runs.len() as u64,
        first_violation_median_ms: median(&first),
        first_violation_max_ms: first.last().copied(),
        acquires_ok: runs.iter().map(|r| r.acquires_ok).sum(),
        acquires_tried: runs.iter().map(|r| r.acquires_tried).sum(),
        p50_ms: median(&p50s),
        p99_ms: p99,
        ops_per_sec: (!made.is_empty())
            .then(|| made.iter().map(|r| r.ops_per_sec).sum::<f64>() / made.len() as f64),
        sizes: head.sizes,
        lease_ms: head.lease_ms,
        lease_from: head.lease_from,
        scenario_file: head.scenario_file,
        runs,
        explored: None,
        rate: Rate::of(violating, counted, checked - counted),
    }
}

/// Of `runs`, those with a safety violation and those that could have shown one: a run that
/// did, or one that a fault exposed (a deadlocked run too: its safety held under the
/// fault). A run whose fault tested nothing, or whose check could not decide, is in neither.
pub fn safety_counts(runs: &[RunSummary]) -> (u64, u64) {
    let verdict_is = |r: &RunSummary, v: &str| r.verdict.as_deref() == Some(v);
    let violating = runs.iter().filter(|r| verdict_is(r, "invalid")).count() as u64;
    let counted = runs
        .iter()
        .filter(|r| {
            verdict_is(r, "invalid")
                || ((verdict_is(r, "valid") || verdict_is(r, "stuck")) && r.not_exposed.is_none())
        })
        .count() as u64;
    (violating, counted)
}

/// `cell` judged by the expectation `expected` (`valid`, `invalid`, `stuck`, `n/a` or
/// `not-injectable`) for the reason `why`: a page made again after its matrix file's
/// expectations changed (`matrix render`) marks the cells that disagree with them now.
pub fn with_expectation(cell: &mut CellSummary, expected: &str, why: &str) {
    cell.expected = expected.to_owned();
    cell.expected_why = why.to_owned();
    cell.mismatch = disagrees(&cell.status, expected);
}

/// Whether `status` disagrees with the expected verdict `expected`.
fn disagrees(status: &CellStatus, expected: &str) -> bool {
    match (status, expected) {
        (CellStatus::NotApplicable(_), e) => e != "n/a",
        (CellStatus::NotInjectable(_), e) => e != "not-injectable",
        (CellStatus::Unsafe { .. } | CellStatus::UnsafeExplored { .. }, e) => e != "invalid",
        (CellStatus::Stuck { .. }, e) => e != "stuck",
        (CellStatus::Safe { .. }, e) => e != "valid",
        // Neither agrees nor disagrees: shown as such, not as a mismatch.
        (
            CellStatus::NotRun
            | CellStatus::Untestable(_)
            | CellStatus::NotExposed(_)
            | CellStatus::Unknown(_),
            _,
        ) => false,
    }
}

/// `cell` with what `matrix --explore-safe` found in it: a safe cell stays safe only if the
/// search did not break it either, and a cell whose fixed-size fault tested nothing is broken
/// by a search that did; a find that did not reproduce leaves the cell as it was (and is
/// shown beside it). Exploring never makes a cell safer.
pub fn with_exploration(mut cell: CellSummary, explored: Option<CellExplore>) -> CellSummary {
    if let (CellStatus::Safe { .. } | CellStatus::NotExposed(_), Some(e)) =
        (&cell.status, &explored)
    {
        if e.broke {
            let (hits, runs) = e.reproduced.unwrap_or((0, 0));
            cell.status = CellStatus::UnsafeExplored {
                class: e.found.clone(),
                hits,
                runs,
            };
            cell.mismatch = disagrees(&cell.status, &cell.expected);
        }
    }
    cell.explored = explored;
    cell
}

/// The middle of sorted values (the mean of the middle two for an even count).
fn median(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn run(seed: u64, verdict: &str, first: Option<f64>, not_tested: Option<&str>) -> RunSummary {
        RunSummary {
            v: 1,
            row: "etcd".into(),
            column: "pause".into(),
            seed,
            verdict: Some(verdict.into()),
            error: None,
            not_exposed: not_tested.map(Into::into),
            exposed_by: None,
            exposed_instances: None,
            violations: u64::from(verdict == "invalid"),
            first_violation_ms: first,
            acquires_ok: 90,
            acquires_tried: 100,
            p50_ms: Some(seed as f64),
            p99_ms: Some(10.0 * seed as f64),
            ops_per_sec: 50.0,
            lease_ms: Some((1000, 1000)),
            run: None,
            reproduce: String::new(),
            secs: 1.0,
            library: None,
            server_version: None,
            recheck: None,
            runtime_stall_ms: None,
        }
    }

    fn head(expected: &str) -> CellHead {
        CellHead {
            row: "etcd".into(),
            column: "pause".into(),
            expected: expected.into(),
            expected_why: "why".into(),
            ..CellHead::default()
        }
    }

    #[test]
    fn violations_in_k_of_n_with_time_to_first_violation() {
        let c = aggregate(
            head("invalid"),
            vec![
                run(3, "invalid", Some(2500.0), None),
                run(1, "invalid", Some(1500.0), None),
                run(2, "valid", None, None),
            ],
        );
        assert_eq!(c.status, CellStatus::Unsafe { k: 2, n: 3 });
        assert!(!c.mismatch);
        assert_eq!(c.first_violation_median_ms, Some(2000.0));
        assert_eq!(c.first_violation_max_ms, Some(2500.0));
        assert_eq!((c.acquires_ok, c.acquires_tried), (270, 300));
        assert_eq!((c.p50_ms, c.p99_ms), (Some(2.0), Some(30.0)));
        assert_eq!(c.runs.iter().map(|r| r.seed).collect::<Vec<_>>(), [1, 2, 3]);
        // The same runs against an expectation of safety are a mismatch.
        let c = aggregate(head("valid"), vec![run(1, "invalid", Some(1.0), None)]);
        assert!(c.mismatch);
    }

    #[test]
    fn the_rate_counts_violations_and_runs_whose_fault_reached_its_size_with_its_interval() {
        let c = aggregate(
            head("invalid"),
            vec![
                run(1, "invalid", Some(1.0), None),
                run(2, "valid", None, None),
                run(3, "valid", None, Some("the pause ended before the lease")),
                run(
                    4,
                    "invalid",
                    Some(2.0),
                    Some("the pause ended before the lease"),
                ),
                run(5, "stuck", None, None),
            ],
        );
        // A violation counts wherever its fault reached; a run that tested nothing does not.
        assert_eq!(c.status, CellStatus::Unsafe { k: 2, n: 4 });
        let r = c.rate.as_ref().unwrap();
        assert_eq!((r.k, r.n, r.left_out), (2, 4, 1));
        assert_eq!(r.method, "Clopper-Pearson, 95%");
        assert_eq!(r.interval_text(), "6–94%");
        // Run 3, valid and not exposed, is apart from the count, and the label says so.
        assert_eq!(
            crate::matrix::cell_text(&c),
            "UNSAFE 2/4 6–94%, 1 not exposed"
        );
        let sentence = crate::matrix::cell_sentence(&c);
        assert!(sentence.contains("the rate is 6% to 94%"), "{sentence}");
        assert!(sentence.contains("1 run(s) did not count"), "{sentence}");
        // Run 4 broke though its fault opened no window: counted, and said apart.
        assert!(
            sentence.contains("; in 1 of them (seed(s) 4) no instance of the fault opened a window for a violation"),
            "{sentence}"
        );

        let ten: Vec<RunSummary> = (1..=10).map(|s| run(s, "valid", None, None)).collect();
        let c = aggregate(head("valid"), ten);
        assert_eq!(crate::matrix::cell_text(&c), "safe 0/10 ≤31%");
        let sentence = crate::matrix::cell_sentence(&c);
        assert!(
            sentence.contains("a violation in more than 31% of exposed runs would have shown here with 95% confidence"),
            "{sentence}"
        );
        // Nothing counted, no rate.
        let c = aggregate(
            head("valid"),
            vec![run(1, "valid", None, Some("never started"))],
        );
        assert_eq!(c.rate, None);
    }

    #[test]
    fn a_deadlock_is_stuck_never_unsafe_and_a_safety_violation_outranks_it() {
        // node-redlock-v5 × partition: a split vote that stays split, no second holder.
        let c = aggregate(
            head("stuck"),
            vec![
                run(1, "stuck", None, None),
                run(2, "valid", None, None),
                run(3, "stuck", None, None),
            ],
        );
        assert_eq!(c.status, CellStatus::Stuck { k: 2, n: 3 });
        assert_eq!(c.status.class(), "stuck");
        assert_eq!(c.violating_runs, 0, "a deadlock is no safety violation");
        assert!(!c.mismatch);
        // Expected unsafe, found stuck: a mismatch, shown as stuck.
        let c = aggregate(head("invalid"), vec![run(1, "stuck", None, None)]);
        assert_eq!(c.status, CellStatus::Stuck { k: 1, n: 1 });
        assert!(c.mismatch);
        // One run with a safety violation makes the cell unsafe, whatever deadlocked.
        let c = aggregate(
            head("stuck"),
            vec![
                run(1, "stuck", None, None),
                run(2, "invalid", Some(3.0), None),
            ],
        );
        assert_eq!(c.status, CellStatus::Unsafe { k: 1, n: 2 });
        assert!(c.mismatch);
        // The runner's own not-tested verdict is not tested in the cell too.
        let why = "the pause fell short";
        let c = aggregate(head("invalid"), vec![run(1, "not-tested", None, Some(why))]);
        assert_eq!(c.status, CellStatus::NotExposed(why.into()));
    }

    #[test]
    fn valid_runs_whose_fault_fell_short_are_not_tested_never_safe() {
        let why = "the longest client pause lasted 900 ms, not past the 1000 ms lease";
        let short = Some(why);
        let c = aggregate(
            head("invalid"),
            vec![run(1, "valid", None, short), run(2, "valid", None, short)],
        );
        assert_eq!(c.status, CellStatus::NotExposed(why.into()));
        assert!(!c.mismatch, "not tested is shown as such, not as a verdict");
        // One run that reached the size makes the cell safe in that run.
        let c = aggregate(
            head("valid"),
            vec![run(1, "valid", None, short), run(2, "valid", None, None)],
        );
        assert_eq!(c.status, CellStatus::Safe { tested: 1 });
        assert!(!c.mismatch);
        // A violation counts even when the fault fell short: it happened.
        let c = aggregate(head("invalid"), vec![run(1, "invalid", Some(5.0), short)]);
        assert_eq!(c.status, CellStatus::Unsafe { k: 1, n: 1 });
    }

    pub(crate) fn explored(
        found: &str,
        reproduced: Option<(u32, u32)>,
        broke: bool,
    ) -> CellExplore {
        CellExplore {
            v: 1,
            row: "etcd".into(),
            column: "pause".into(),
            budget_s: 300.0,
            elapsed_s: 290.0,
            runs: 37,
            faults_tried: 61,
            faults: vec!["client-pause".into()],
            found: found.into(),
            found_about: "about".into(),
            reproduced,
            broke,
            schedule: reproduced.map(|_| "client-pause after-acquire 2400 ms on client 1".into()),
            finding: None,
            scenario: None,
            repeat: broke.then(|| "cargo run -- scenario x-shrunk.toml --seed 3".into()),
            dir: "explore/x".into(),
            stopped: "the budget of 300 s ran out".into(),
            command: "cargo run -- explore m.toml --row etcd --column pause".into(),
        }
    }

    #[test]
    fn a_safe_cell_stays_safe_only_if_the_search_did_not_break_it() {
        let safe = || aggregate(head("valid"), vec![run(1, "valid", None, None)]);
        // Nothing found: still safe, with the search beside it.
        let c = with_exploration(safe(), Some(explored("nothing", None, false)));
        assert_eq!(c.status, CellStatus::Safe { tested: 1 });
        assert!(!c.mismatch);
        assert!(c.explored.is_some());
        // A reproduced find breaks it, and the expectation of safety now disagrees.
        let c = with_exploration(safe(), Some(explored("kleppmann", Some((5, 5)), true)));
        assert_eq!(
            c.status,
            CellStatus::UnsafeExplored {
                class: "kleppmann".into(),
                hits: 5,
                runs: 5
            }
        );
        assert_eq!(c.status.class(), "unsafe");
        assert!(c.mismatch);
        // A find that did not reproduce leaves it safe.
        let c = with_exploration(safe(), Some(explored("lock-bug", Some((1, 5)), false)));
        assert_eq!(c.status, CellStatus::Safe { tested: 1 });
        // A cell whose fault fell short tested nothing; a search that broke it did.
        let short = Some("the pause ended before the lease ran out");
        let untested = || aggregate(head("valid"), vec![run(1, "valid", None, short)]);
        let c = with_exploration(untested(), Some(explored("nothing", None, false)));
        assert!(matches!(c.status, CellStatus::NotExposed(_)));
        let c = with_exploration(untested(), Some(explored("kleppmann", Some((5, 5)), true)));
        assert_eq!(c.status.class(), "unsafe");
        assert!(c.mismatch);
        // Exploring never changes a cell that was not safe: unsafe stays what its runs say,
        // and an expectation of a violation agrees with a search that broke a safe cell.
        let unsafe_cell = aggregate(head("invalid"), vec![run(1, "invalid", Some(1.0), None)]);
        let c = with_exploration(unsafe_cell, Some(explored("lock-bug", Some((5, 5)), true)));
        assert_eq!(c.status, CellStatus::Unsafe { k: 1, n: 1 });
        let safe_expected_unsafe = aggregate(head("invalid"), vec![run(1, "valid", None, None)]);
        assert!(safe_expected_unsafe.mismatch);
        let c = with_exploration(
            safe_expected_unsafe,
            Some(explored("kleppmann", Some((4, 5)), true)),
        );
        assert!(!c.mismatch);
    }

    #[test]
    fn not_applicable_not_run_and_unknown() {
        let mut h = head("n/a");
        h.not_applicable = Some("clock-jump cannot run on server \"etcd\"".into());
        let c = aggregate(h.clone(), vec![]);
        assert_eq!(c.status.class(), "na");
        assert!(!c.mismatch);
        h.expected = "valid".into();
        assert!(aggregate(h, vec![]).mismatch, "an n/a cell expected to run");
        // What only this machine cannot do is not the lock's n/a.
        let mut h = head("not-injectable");
        h.not_injectable = Some("etcd is a Go binary and ignores libfaketime".into());
        let c = aggregate(h.clone(), vec![]);
        assert_eq!(c.status.class(), "notinjectable");
        assert!(!c.mismatch);
        assert_eq!(crate::matrix::cell_text(&c), "not injectable here");
        assert!(crate::matrix::cell_sentence(&c).starts_with(
            "not injectable here: etcd is a Go binary and ignores libfaketime (the lock could meet this fault; this says nothing about it)"
        ));
        h.expected = "n/a".into();
        assert!(
            aggregate(h, vec![]).mismatch,
            "expected n/a, refused only here"
        );
        assert_eq!(aggregate(head("valid"), vec![]).status, CellStatus::NotRun);
        let mut failed = run(1, "valid", None, None);
        failed.verdict = None;
        failed.error = Some("start etcd: port taken".into());
        let c = aggregate(head("valid"), vec![failed, run(2, "unknown", None, None)]);
        assert_eq!(
            c.status,
            CellStatus::Unknown("seed 1: failed to start etcd: port taken".into())
        );
        assert!(!c.mismatch);
        // A cell the matrix file declares untestable is not tested, whatever ran.
        let mut h = head("valid");
        h.declared_not_tested = Some("clients bypass the proxies".into());
        let c = aggregate(h, vec![run(1, "valid", None, None)]);
        assert_eq!(
            c.status,
            CellStatus::Untestable("clients bypass the proxies".into())
        );
        assert!(!c.mismatch);
        // An expectation of n/a on a cell that ran is a mismatch.
        assert!(aggregate(head("n/a"), vec![run(1, "valid", None, None)]).mismatch);
    }
}
