//! Checking all parts of a history, one after another or on worker threads, and merging their
//! outcomes into one report.

use super::budget::{Budget, Limits, Stop};
use super::op::History;
use super::report::{LinReport, Violation};
use super::search::{Failure, PartOutcome, Search};
use super::shrink::shrink;
use super::spec::{Part, Spec};
use crate::verdict::Verdict;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Steps a part runs before the next part's turn; doubles on every turn. Small, since the
/// illegal part of an invalid history is often decided in a few hundred steps, and every part
/// queued before it runs its quantum first.
const FIRST_QUANTUM: u64 = 1 << 10;

/// Fewer operations than this are checked on one thread whatever the budget says.
const PARALLEL_MIN_OPS: usize = 1000;

/// Least time given to narrowing a violation down.
const SHRINK_MIN: Duration = Duration::from_millis(50);

/// Checks every part and builds the report. `model` names the model in the report.
pub fn check_parts<S: Spec>(
    model: &str,
    history: &History,
    mut parts: Vec<Part<S>>,
    budget: &Budget,
) -> LinReport {
    let start = Instant::now();
    let cancel = AtomicBool::new(false);
    let used = AtomicUsize::new(0);
    let limits = Limits {
        deadline: budget.time.map(|t| start + t),
        memory_bytes: budget.memory_bytes,
        cancel: &cancel,
        memory_used: &used,
    };
    let labels: Vec<String> = parts.iter().map(|p| p.label.clone()).collect();
    let n_parts = parts.len();
    // Small histories stay on the calling thread: waking a worker on a busy machine costs
    // more (a scheduler tick) than checking them.
    let total_ops: usize = parts.iter().map(|p| p.ops.len()).sum();
    let threads = if total_ops < PARALLEL_MIN_OPS {
        1
    } else {
        budget.threads.clamp(1, n_parts.max(1))
    };
    // Parts take turns with doubling step quanta: a valid history costs at most about twice
    // its longest part, and an invalid one is found as soon as its quickest illegal part is.
    let queue: Mutex<VecDeque<(usize, Search<S>, u64)>> = Mutex::new(
        parts
            .drain(..)
            .enumerate()
            .map(|(i, p)| (i, Search::new(p, history), FIRST_QUANTUM))
            .collect(),
    );
    type Slot<S> = Mutex<Option<(PartOutcome, Option<Part<S>>)>>;
    let results: Vec<Slot<S>> = (0..n_parts).map(|_| Mutex::new(None)).collect();
    let work = || loop {
        let Some((i, mut search, quantum)) = queue.lock().expect("queue").pop_front() else {
            break;
        };
        match search.run(quantum, history, &limits) {
            Some(o) => {
                // An illegal part is kept for narrowing the violation down afterwards.
                let keep = matches!(o, PartOutcome::Illegal(_));
                if keep {
                    cancel.store(true, Ordering::Relaxed);
                }
                let part = keep.then(|| search.into_part());
                *results[i].lock().expect("result slot") = Some((o, part));
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
    let outcomes: Vec<(PartOutcome, Option<Part<S>>)> = results
        .into_iter()
        .map(|r| {
            r.into_inner()
                .expect("result slot")
                .unwrap_or((PartOutcome::Stopped(Stop::Cancelled), None))
        })
        .collect();
    let elapsed = start.elapsed();

    let mut verdict = Verdict::Valid;
    let mut illegal: Option<(usize, Failure, Part<S>)> = None;
    let mut unknown_reason = None;
    for (i, (o, part)) in outcomes.into_iter().enumerate() {
        match o {
            PartOutcome::Linearizable => {}
            PartOutcome::Illegal(f) => {
                verdict = Verdict::Invalid;
                let smaller = illegal
                    .as_ref()
                    .is_none_or(|(_, g, _)| f.pending.len() < g.pending.len());
                if let (true, Some(part)) = (smaller, part) {
                    illegal = Some((i, f, part));
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
    let violation = illegal.map(|(i, f, part)| {
        // Narrowing down gets a few times what deciding took, within the overall budget.
        let fresh = AtomicBool::new(false);
        let fresh_used = AtomicUsize::new(0);
        let own = Instant::now() + (elapsed * 4).max(SHRINK_MIN);
        let shrink_limits = Limits {
            deadline: Some(limits.deadline.map_or(own, |d| d.min(own))),
            memory_bytes: budget.memory_bytes,
            cancel: &fresh,
            memory_used: &fresh_used,
        };
        Violation::new(
            labels[i].clone(),
            history,
            shrink(&part, history, f, &shrink_limits),
        )
    });
    if verdict == Verdict::Invalid {
        unknown_reason = None;
    }
    LinReport {
        model: model.to_string(),
        verdict,
        elapsed,
        explain_elapsed: start.elapsed() - elapsed,
        ops: history.ops.len(),
        parts: n_parts,
        passed_over: 0,
        violation,
        unknown_reason,
    }
}
