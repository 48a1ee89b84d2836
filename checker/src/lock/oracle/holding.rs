//! Test oracle (the in-memory checker the streaming one replaced). Believed holding intervals: from a process's `acquire ok` until it stops believing it holds
//! the lock (release invoke, lost renew, retirement, crash, or its last event).

use super::ops::Ops;
use crate::history::{EventKind, F};
use std::collections::HashMap;

pub(crate) use crate::lock::stream::EndReason;

/// One process believing it holds one lock, from `start_ns` to `end_ns`.
#[derive(Debug, Clone)]
pub(crate) struct Holding<'a> {
    pub process: u64,
    pub lock: &'a str,
    pub token: Option<u64>,
    /// Index of the `acquire ok` that began it.
    pub acquire_index: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Index of the event that ended it.
    pub end_index: u64,
    pub end: EndReason,
    /// Writes (positions in `Ops::ops`) the process invoked while holding.
    pub writes: Vec<usize>,
}

/// All holding intervals of a history, and which interval each write was invoked in.
pub(crate) struct Holdings<'a> {
    /// Ordered by process, then start.
    pub list: Vec<Holding<'a>>,
    /// Write (position in `Ops::ops`) → position in `list` of the interval it was invoked in.
    pub of_write: HashMap<usize, usize>,
}

/// Whether an operation on `op_lock` concerns a holding of `held`: an operation that names no
/// lock concerns every lock its process holds.
fn concerns(op_lock: &str, held: &str) -> bool {
    op_lock.is_empty() || op_lock == held
}

pub(crate) fn holdings<'a>(ops: &Ops<'a>) -> Holdings<'a> {
    let mut list: Vec<Holding<'a>> = Vec::new();
    let mut of_write = HashMap::new();
    let mut processes: Vec<u64> = ops.by_process.keys().copied().collect();
    processes.sort_unstable();
    for p in processes {
        let crash = ops.crash.get(&p).copied();
        let mut open: Vec<Holding<'a>> = Vec::new();
        let mut close = |open: &mut Vec<Holding<'a>>,
                         keep: &dyn Fn(&Holding<'a>) -> bool,
                         at: (u64, u64),
                         why: EndReason| {
            let mut i = 0;
            while i < open.len() {
                if keep(&open[i]) {
                    i += 1;
                } else {
                    let mut h = open.swap_remove(i);
                    h.end_ns = at.0.max(h.start_ns);
                    h.end_index = at.1;
                    h.end = why;
                    list.push(h);
                }
            }
        };
        for &at in &ops.by_process[&p] {
            let op = &ops.ops[at];
            if let Some(c) = crash.filter(|c| c.0 < op.invoke.time_ns) {
                close(&mut open, &|_| false, c, EndReason::Crashed);
            }
            let invoked = (op.invoke.time_ns, op.invoke.index);
            match op.f {
                F::Release => close(
                    &mut open,
                    &|h| !concerns(op.lock, h.lock),
                    invoked,
                    EndReason::Released,
                ),
                F::Write => {
                    let named = open.iter().any(|h| h.lock == op.lock);
                    for h in open.iter_mut() {
                        if !named || h.lock == op.lock {
                            h.writes.push(at);
                        }
                    }
                }
                _ => {}
            }
            let Some(c) = op.completion else { continue };
            let completed = (c.time_ns, c.index);
            match (c.kind, op.f) {
                (EventKind::Info, _) => {
                    close(&mut open, &|_| false, completed, EndReason::Retired);
                    break;
                }
                (EventKind::Ok, F::Acquire) => {
                    close(
                        &mut open,
                        &|h| h.lock != op.lock,
                        completed,
                        EndReason::Reacquired,
                    );
                    open.push(Holding {
                        process: p,
                        lock: op.lock,
                        token: c.value.token,
                        acquire_index: c.index,
                        start_ns: c.time_ns,
                        end_ns: c.time_ns,
                        end_index: c.index,
                        end: EndReason::HistoryEnd,
                        writes: Vec::new(),
                    });
                }
                (EventKind::Fail, F::Renew) => close(
                    &mut open,
                    &|h| !concerns(op.lock, h.lock),
                    completed,
                    EndReason::Lost,
                ),
                _ => {}
            }
        }
        let (end, why) = match crash {
            Some(c) => (c, EndReason::Crashed),
            None => ((ops.end_ns, ops.end_index), EndReason::HistoryEnd),
        };
        close(&mut open, &|_| false, end, why);
    }
    list.sort_by_key(|h| (h.process, h.start_ns, h.acquire_index));
    for (i, h) in list.iter().enumerate() {
        for &w in &h.writes {
            of_write.entry(w).or_insert(i);
        }
    }
    Holdings { list, of_write }
}
