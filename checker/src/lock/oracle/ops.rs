//! Test oracle (the in-memory checker the streaming one replaced): Client operations: each invoke paired with its completion, indexed by process, plus the
//! per-process facts (last event, crash) the checks need.

use crate::history::{Event, EventKind, Process, F};
use std::collections::HashMap;

/// One client operation: an invoke and, unless the history ended first, its completion.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Op<'a> {
    pub process: u64,
    pub f: F,
    /// The lock named by the invoke (or the completion); "" when neither names one.
    pub lock: &'a str,
    pub invoke: &'a Event,
    pub completion: Option<&'a Event>,
}

impl Op<'_> {
    /// How the operation ended; `None` when it never completed.
    pub fn outcome(&self) -> Option<EventKind> {
        self.completion.map(|c| c.kind)
    }

    pub fn is_ok(&self) -> bool {
        self.outcome() == Some(EventKind::Ok)
    }

    /// Fencing token of the operation: from the completion when it carries one (acquire ok),
    /// else from the invoke (write).
    pub fn token(&self) -> Option<u64> {
        self.completion
            .and_then(|c| c.value.token)
            .or(self.invoke.value.token)
    }

    pub fn error(&self) -> Option<&str> {
        self.completion.and_then(|c| c.error.as_deref())
    }
}

/// A history split into client operations.
pub(crate) struct Ops<'a> {
    /// All client operations, in invoke order.
    pub ops: Vec<Op<'a>>,
    /// Per process, its operations' positions in `ops`, in order.
    pub by_process: HashMap<u64, Vec<usize>>,
    /// Per process, the first nemesis `crash {client}` of it: (time, index).
    pub crash: HashMap<u64, (u64, u64)>,
    /// Time of the last event of the history.
    pub end_ns: u64,
    /// Index of the last event of the history.
    pub end_index: u64,
}

/// Pairs every invoke with the next completion of the same process. A completion without an
/// invoke is malformed and ignored. Precondition: `events` are in history order.
pub(crate) fn split_ops(events: &[Event]) -> Ops<'_> {
    let mut ops: Vec<Op<'_>> = Vec::new();
    let mut pending: HashMap<u64, usize> = HashMap::new();
    let mut by_process: HashMap<u64, Vec<usize>> = HashMap::new();
    let mut crash = HashMap::new();
    for e in events {
        let p = match e.process {
            Process::Client(p) => p,
            Process::Nemesis => {
                if e.f == F::Crash {
                    if let Some(c) = e.value.client {
                        crash.entry(c).or_insert((e.time_ns, e.index));
                    }
                }
                continue;
            }
        };
        if e.f == F::Notice {
            continue;
        }
        if e.kind == EventKind::Invoke {
            let at = ops.len();
            ops.push(Op {
                process: p,
                f: e.f,
                lock: e.lock.as_deref().unwrap_or(""),
                invoke: e,
                completion: None,
            });
            pending.insert(p, at);
            by_process.entry(p).or_default().push(at);
        } else if let Some(at) = pending.remove(&p) {
            let op = &mut ops[at];
            op.completion = Some(e);
            if op.lock.is_empty() {
                op.lock = e.lock.as_deref().unwrap_or("");
            }
        }
    }
    Ops {
        ops,
        by_process,
        crash,
        end_ns: events.last().map_or(0, |e| e.time_ns),
        end_index: events.last().map_or(0, |e| e.index),
    }
}
