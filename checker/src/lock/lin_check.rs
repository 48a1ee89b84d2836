//! The linearizability summary of a run's locks, one lock after another in name order: a lock
//! the streaming check decided linearizable adds its operations, and any other is searched
//! ([`check_history`]) from its operations held whole. The first lock found not linearizable
//! ends the check (the verdict is decided).

use super::LinSummary;
use crate::lin_search::{Budget, History, LinReport};
use crate::linearizability::check_history;
use crate::models::Model;
use crate::verdict::Verdict;
use std::time::{Duration, Instant};

/// One lock, as the summary takes it.
pub(super) enum Lock {
    /// Found linearizable while the history streamed, with this many operations (those that
    /// did not fail).
    Streamed(u64),
    /// Its operations, for the search.
    Ops(History),
}

/// Checks each lock against `model` within `budget`, counted from `start`; `streamed` is the
/// time the streaming check took.
pub(super) fn summarize(
    model: &dyn Model,
    locks: impl IntoIterator<Item = (String, Lock)>,
    budget: &Budget,
    start: Instant,
    streamed: Duration,
) -> LinSummary {
    let mut summary = LinSummary {
        model: model.to_string(),
        verdict: Verdict::Valid,
        elapsed_ms: streamed.as_secs_f64() * 1e3,
        ops: 0,
        explanation: None,
        unknown_reason: None,
        violated_at_ns: None,
    };
    for (lock, part) in locks {
        let history = match part {
            // The search would find it valid too: a valid report adds only its time.
            Lock::Streamed(n) if n > 0 => {
                summary.ops += n;
                continue;
            }
            // No operation left: the search's "nothing was tested".
            Lock::Streamed(_) => History::default(),
            Lock::Ops(history) => history,
        };
        let left = Budget {
            time: budget.time.map(|t| {
                t.saturating_sub(start.elapsed())
                    .max(Duration::from_millis(1))
            }),
            ..budget.clone()
        };
        summary.ops += history.ops.len() as u64;
        match check_history(&history, model, &left) {
            Ok(mut report) => {
                // The operations carry no key (one lock's part, and 40 bytes less per
                // operation); the report names the lock.
                let part = format!("lock {lock:?}");
                if let Some(v) = &mut report.violation {
                    v.part.clone_from(&part);
                }
                if let Some(r) = &mut report.unknown_reason {
                    *r = r.replace("lock \"\"", &part);
                }
                if merge(&mut summary, &report) {
                    break;
                }
            }
            Err(e) => {
                summary.verdict = summary.verdict.merge(Verdict::Unknown);
                summary.unknown_reason.get_or_insert_with(|| {
                    format!("the {model} model cannot read this history: {e}")
                });
            }
        }
    }
    summary
}

/// Adds one lock's report; true when it is a violation (which decides the verdict).
fn merge(summary: &mut LinSummary, report: &LinReport) -> bool {
    summary.elapsed_ms += (report.elapsed + report.explain_elapsed).as_secs_f64() * 1e3;
    match report.verdict {
        Verdict::Invalid => {
            summary.verdict = Verdict::Invalid;
            summary.explanation = Some(report.to_string());
            summary.unknown_reason = None;
            // The prefix that ends with the culprit's return is the shortest that cannot be
            // linearized: from then on the violation is certain.
            summary.violated_at_ns = report
                .violation
                .as_ref()
                .and_then(|v| v.culprit.as_ref())
                .map(|op| op.ret_ns.unwrap_or(op.call_ns));
            true
        }
        Verdict::Unknown => {
            summary.verdict = summary.verdict.merge(Verdict::Unknown);
            if summary.unknown_reason.is_none() {
                summary.unknown_reason.clone_from(&report.unknown_reason);
            }
            false
        }
        // The search decides valid, invalid or unknown only; liveness and a fault's reach
        // are other checks'.
        Verdict::Valid | Verdict::NotExposed | Verdict::Stuck => false,
    }
}
