//! The lock operations of a history, gathered per lock name in one pass for the
//! linearizability check (P-compositionality: each lock is checked on its own, so the search
//! and its memos are as large as the largest lock's part). Only `acquire`, `release` and
//! `renew` are kept, in a compact form, and each lock's part is built, checked and dropped in
//! turn.

use super::params::Property;
use super::LinSummary;
use crate::history::{EventKind, EventRef, Process, F};
use crate::lin_search::{Budget, Datum, History, LinReport, Op, OpF};
use crate::linearizability::check_history;
use crate::models::{lease, mutex, Model};
use crate::verdict::Verdict;
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

/// A lock operation, as small as it can be kept (64 bytes): a history of millions of lock
/// operations is held until it is checked.
#[derive(Debug, Clone, Copy)]
struct LockOp {
    process: u64,
    call: u64,
    /// [`NONE`] while open or unknown.
    ret: u64,
    call_ns: u64,
    ret_ns: u64,
    /// The lease asked for (acquire, renew), or the `int` of a release, if [`HAS_ARG`].
    arg: i64,
    /// The token granted to an acquire, if [`HAS_TOKEN`].
    token: i64,
    f: OpF,
    flags: u8,
}

const NONE: u64 = u64::MAX;
const HAS_ARG: u8 = 1;
/// Completed `ok`.
const DONE: u8 = 2;
const HAS_TOKEN: u8 = 4;
/// Completed `fail`: did not happen, left out.
const FAILED: u8 = 8;

/// Operations per chunk: storage grows by chunks, never by doubling one huge buffer.
const CHUNK: usize = 1 << 16;

/// One lock's operations, in invocation order.
#[derive(Debug, Default)]
struct Part {
    chunks: Vec<Vec<LockOp>>,
    len: usize,
    failed: usize,
}

impl Part {
    fn push(&mut self, op: LockOp) -> usize {
        if self.chunks.last().is_none_or(|c| c.len() == CHUNK) {
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        self.chunks.last_mut().expect("a chunk").push(op);
        self.len += 1;
        self.len - 1
    }

    fn get_mut(&mut self, at: usize) -> &mut LockOp {
        &mut self.chunks[at / CHUNK][at % CHUNK]
    }

    /// The operations that did not fail, as the checker's history; each chunk is freed once
    /// copied.
    fn into_history(self) -> History {
        let mut ops = Vec::with_capacity(self.len - self.failed);
        for chunk in self.chunks {
            ops.extend(
                chunk
                    .into_iter()
                    .filter(|o| o.flags & FAILED == 0)
                    .map(expand),
            );
        }
        History { ops }
    }
}

fn lock_f(f: F) -> Option<OpF> {
    match f {
        F::Acquire => Some(OpF::Acquire),
        F::Release => Some(OpF::Release),
        F::Renew => Some(OpF::Renew),
        F::Write | F::Read | F::Cas | F::Notice => None,
        F::Partition
        | F::Slow
        | F::Heal
        | F::Pause
        | F::Resume
        | F::Crash
        | F::Restart
        | F::Clock
        | F::ClockReset
        | F::Failover => None,
    }
}

/// Every lock's operations, in invocation order.
#[derive(Debug, Default)]
pub struct LockOps {
    locks: BTreeMap<String, Part>,
    /// Per process and lane (renew or not): the lock and position of the operation in flight.
    in_flight: HashMap<(u64, bool), (String, usize)>,
    /// Some acquire asked for a lease, or some holder was granted one: the lock expires. A
    /// library that does not say how long a grant is good for (`lease_ms` null on the grant)
    /// still holds the lease it was asked for, and a lock checked as a mutex that never
    /// expires would call every grant after such a holder's lease ran out impossible.
    leases: bool,
}

fn to_i64(x: Option<u64>) -> Option<i64> {
    x.and_then(|x| i64::try_from(x).ok())
}

impl LockOps {
    /// Takes the next event, in history order.
    pub fn push(&mut self, e: &EventRef<'_>) {
        let (Process::Client(p), Some(f)) = (e.process, lock_f(e.f)) else {
            return;
        };
        let lane = (p, f == OpF::Renew);
        if e.kind == EventKind::Invoke {
            let lock = e.lock_name().to_string();
            let arg = match f {
                OpF::Acquire | OpF::Renew => to_i64(e.value.lease_ms),
                _ => e.value.int,
            };
            let part = match self.locks.get_mut(&lock) {
                Some(part) => part,
                None => self.locks.entry(lock.clone()).or_default(),
            };
            let at = part.push(LockOp {
                process: p,
                call: e.index,
                ret: NONE,
                call_ns: e.time_ns,
                ret_ns: NONE,
                arg: arg.unwrap_or(0),
                token: 0,
                f,
                flags: if arg.is_some() { HAS_ARG } else { 0 },
            });
            self.in_flight.insert(lane, (lock, at));
            self.leases |= f == OpF::Acquire && arg.is_some();
            return;
        }
        if f == OpF::Acquire && e.kind == EventKind::Ok && e.value.lease_ms.is_some() {
            self.leases = true;
        }
        let Some((lock, at)) = self.in_flight.remove(&lane) else {
            return;
        };
        let part = self
            .locks
            .get_mut(&lock)
            .expect("lock of an operation in flight");
        match e.kind {
            EventKind::Ok => {
                let op = part.get_mut(at);
                op.flags |= DONE;
                if let (OpF::Acquire, Some(t)) = (f, to_i64(e.value.token)) {
                    op.flags |= HAS_TOKEN;
                    op.token = t;
                }
                op.ret = e.index;
                op.ret_ns = e.time_ns;
            }
            // Did not happen: left out.
            EventKind::Fail => {
                part.get_mut(at).flags |= FAILED;
                part.failed += 1;
            }
            EventKind::Info | EventKind::Invoke => {}
        }
    }

    /// The model the lock operations are checked against under `property`, if one fits:
    /// `lease` when the lock has leases (asked for or granted), `mutex` for an exclusive lock
    /// without them.
    pub fn model(&self, property: Property) -> Option<&'static dyn Model> {
        match property {
            _ if self.leases => Some(&lease::LEASE),
            Property::Exclusive => Some(&mutex::MUTEX),
            Property::Fenced => None,
        }
    }

    /// Checks each lock's operations against [`LockOps::model`] within `budget`, one lock
    /// after another; `None` when no model fits. The first lock found not linearizable ends
    /// the check (the verdict is decided).
    pub fn check(self, property: Property, budget: &Budget) -> Option<LinSummary> {
        let model = self.model(property)?;
        let start = Instant::now();
        let mut summary = LinSummary {
            model: model.to_string(),
            verdict: Verdict::Valid,
            elapsed_ms: 0.0,
            ops: 0,
            explanation: None,
            unknown_reason: None,
            violated_at_ns: None,
        };
        for (lock, part) in self.locks {
            let history = part.into_history();
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
        Some(summary)
    }
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

fn expand(o: LockOp) -> Op {
    let datum = |has: bool, x: i64| if has { Datum::Int(x) } else { Datum::Nil };
    let done = o.flags & DONE != 0;
    Op {
        process: o.process,
        f: o.f,
        key: None,
        arg: datum(o.flags & HAS_ARG != 0, o.arg),
        out: done.then(|| datum(o.flags & HAS_TOKEN != 0, o.token)),
        call: o.call,
        ret: done.then_some(o.ret),
        call_ns: o.call_ns,
        ret_ns: done.then_some(o.ret_ns),
    }
}
