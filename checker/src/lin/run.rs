//! Checking all parts of a history, one after another or on worker threads, and merging their
//! outcomes into one report.

use super::budget::{Budget, Limits, Stop};
use super::op::History;
use super::report::{LinReport, Violation};
use super::search::{PartOutcome, Search};
use super::spec::{Part, Spec};
use crate::verdict::Verdict;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Steps a part runs before the next part's turn; doubles on every turn.
const FIRST_QUANTUM: u64 = 1 << 14;

/// Checks every part and builds the report. `model` names the model in the report.
pub fn check_parts<S: Spec>(
    model: &str,
    history: &History,
    mut parts: Vec<Part<S>>,
    budget: &Budget,
) -> LinReport {
    let start = Instant::now();
    let cancel = AtomicBool::new(false);
    let limits = Limits {
        deadline: budget.time.map(|t| start + t),
        memory_bytes: budget.memory_bytes,
        cancel: &cancel,
    };
    let labels: Vec<String> = parts.iter().map(|p| p.label.clone()).collect();
    let n_parts = parts.len();
    let threads = budget.threads.clamp(1, n_parts.max(1));
    // Parts take turns with doubling step quanta: a valid history costs at most about twice
    // its longest part, and an invalid one is found as soon as its quickest illegal part is.
    let queue: Mutex<VecDeque<(usize, Search<S>, u64)>> = Mutex::new(
        parts
            .drain(..)
            .enumerate()
            .map(|(i, p)| (i, Search::new(p, history), FIRST_QUANTUM))
            .collect(),
    );
    let results: Vec<Mutex<Option<PartOutcome>>> = (0..n_parts).map(|_| Mutex::new(None)).collect();
    let work = || loop {
        let Some((i, mut search, quantum)) = queue.lock().expect("queue").pop_front() else {
            break;
        };
        match search.run(quantum, history, &limits) {
            Some(o) => {
                if matches!(o, PartOutcome::Illegal(_)) {
                    cancel.store(true, Ordering::Relaxed);
                }
                *results[i].lock().expect("result slot") = Some(o);
            }
            None => queue
                .lock()
                .expect("queue")
                .push_back((i, search, quantum.saturating_mul(2))),
        }
    };
    if threads == 1 {
        work();
    } else {
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(work);
            }
        });
    }
    let outcomes: Vec<PartOutcome> = results
        .into_iter()
        .map(|r| {
            r.into_inner()
                .expect("result slot")
                .unwrap_or(PartOutcome::Stopped(Stop::Cancelled))
        })
        .collect();
    let elapsed = start.elapsed();

    let mut verdict = Verdict::Valid;
    let mut violation = None;
    let mut unknown_reason = None;
    for (i, o) in outcomes.into_iter().enumerate() {
        match o {
            PartOutcome::Linearizable => {}
            PartOutcome::Illegal(f) => {
                verdict = Verdict::Invalid;
                let smaller = violation
                    .as_ref()
                    .is_none_or(|v: &Violation| f.window.len() < v.window.len());
                if smaller {
                    violation = Some(Violation::new(labels[i].clone(), history, f));
                }
            }
            PartOutcome::Stopped(Stop::Cancelled) => {}
            PartOutcome::Stopped(stop) => {
                verdict = verdict.merge(Verdict::Unknown);
                unknown_reason.get_or_insert_with(|| {
                    format!("{} while checking {}", stop.describe(), labels[i])
                });
            }
        }
    }
    if verdict == Verdict::Invalid {
        unknown_reason = None;
    }
    LinReport {
        model: model.to_string(),
        verdict,
        elapsed,
        ops: history.ops.len(),
        parts: n_parts,
        violation,
        unknown_reason,
    }
}
