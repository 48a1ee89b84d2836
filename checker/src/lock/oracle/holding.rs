//! Test oracle (the in-memory checker the streaming one replaced). Believed holding intervals: from a process's `acquire ok` until it stops believing it holds
//! the lock (release invoke, lost renew, retirement, crash, or its last event). A release that
//! comes back `fail` does not end it, unless another process was granted the lock since it
//! began; kept so, it ends at the next grant of the lock to another process (the streaming
//! checker's rule, [`crate::lock::stream::holdings::Release::Kept`]). Leases are not modelled
//! (the generated histories carry none).

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
    /// Where its release stands while it is open.
    release: Rel,
    /// The history index at which the streaming checker closed it, when that came before the
    /// end of a write in flight: a kept holding another process's grant ended. Such a write's
    /// completion is not in the holding's evidence there.
    pub closed_at: u64,
}

/// A holding's release: none; invoked at (time, index) and not back; or failed, kept until the
/// next grant of the lock to another process (time, index), if there is one.
#[derive(Debug, Clone, Copy)]
enum Rel {
    None,
    Pending(u64, u64),
    Kept(Option<(u64, u64)>),
}

/// Per lock, its grants to processes not yet retired: (index, time, process), by index.
type Grants<'a> = HashMap<&'a str, Vec<(u64, u64, u64)>>;

fn grants<'a>(ops: &Ops<'a>) -> Grants<'a> {
    let mut out: Grants<'a> = HashMap::new();
    for (&p, list) in &ops.by_process {
        for &at in list {
            let op = &ops.ops[at];
            let Some(c) = op.completion else { continue };
            match (c.kind, op.f) {
                (EventKind::Info, _) => break,
                (EventKind::Ok, F::Acquire) => out
                    .entry(op.lock)
                    .or_default()
                    .push((c.index, c.time_ns, p)),
                _ => {}
            }
        }
    }
    for g in out.values_mut() {
        g.sort_unstable();
    }
    out
}

/// The first grant of `lock` to a process other than `p` after history index `after`.
fn next_other(grants: &Grants<'_>, lock: &str, p: u64, after: u64) -> Option<(u64, u64, u64)> {
    let g = grants.get(lock)?;
    g[g.partition_point(|g| g.0 <= after)..]
        .iter()
        .find(|g| g.2 != p)
        .copied()
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
    let grants = grants(ops);
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
                    // A release in flight: it ended at its invocation.
                    let (at, why) = match h.release {
                        Rel::Pending(t, i) => ((t, i), EndReason::Released),
                        Rel::None | Rel::Kept(_) => (at, why),
                    };
                    h.end_ns = at.0.max(h.start_ns);
                    h.end_index = at.1;
                    h.end = why;
                    list.push(h);
                }
            }
        };
        // Kept holdings whose superseding grant came before history index `before`.
        let supersede = |open: &mut Vec<Holding<'a>>,
                         close: &mut dyn FnMut(
            &mut Vec<Holding<'a>>,
            &dyn Fn(&Holding<'a>) -> bool,
            (u64, u64),
            EndReason,
        ),
                         before: u64| {
            let due: Vec<(u64, u64)> = open
                .iter()
                .filter_map(|h| match h.release {
                    Rel::Kept(Some(g)) if g.1 < before => Some(g),
                    _ => None,
                })
                .collect();
            for g in due {
                for h in open.iter_mut() {
                    if matches!(h.release, Rel::Kept(Some(k)) if k == g) {
                        h.closed_at = g.1;
                    }
                }
                let (at, why) = match crash.filter(|c| c.0 < g.0) {
                    Some(c) => (c, EndReason::Crashed),
                    None => (g, EndReason::Superseded),
                };
                close(
                    open,
                    &|h| !matches!(h.release, Rel::Kept(Some(k)) if k == g),
                    at,
                    why,
                );
            }
        };
        for &at in &ops.by_process[&p] {
            let op = &ops.ops[at];
            supersede(&mut open, &mut close, op.invoke.index);
            if let Some(c) = crash.filter(|c| c.0 < op.invoke.time_ns) {
                close(&mut open, &|_| false, c, EndReason::Crashed);
            }
            let invoked = (op.invoke.time_ns, op.invoke.index);
            match op.f {
                F::Release => {
                    for h in open.iter_mut().filter(|h| concerns(op.lock, h.lock)) {
                        h.release = Rel::Pending(invoked.0, invoked.1);
                    }
                }
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
            supersede(&mut open, &mut close, c.index);
            let completed = (c.time_ns, c.index);
            let pending = |h: &Holding<'a>| matches!(h.release, Rel::Pending(..));
            match (c.kind, op.f) {
                (EventKind::Info, _) => {
                    close(&mut open, &|_| false, completed, EndReason::Retired);
                    break;
                }
                (EventKind::Ok, F::Release) => {
                    close(&mut open, &|h| !pending(h), completed, EndReason::Released)
                }
                (EventKind::Fail, F::Release) => {
                    let passed_over = |h: &Holding<'a>| {
                        next_other(&grants, h.lock, p, h.acquire_index)
                            .is_some_and(|g| g.0 < c.index)
                    };
                    close(
                        &mut open,
                        &|h| !pending(h) || !passed_over(h),
                        completed,
                        EndReason::Released,
                    );
                    for h in open.iter_mut().filter(|h| pending(h)) {
                        h.release =
                            Rel::Kept(next_other(&grants, h.lock, p, c.index).map(|g| (g.1, g.0)));
                    }
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
                        release: Rel::None,
                        closed_at: u64::MAX,
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
        supersede(&mut open, &mut close, u64::MAX);
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
