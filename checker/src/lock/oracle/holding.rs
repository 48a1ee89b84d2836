//! Test oracle (the in-memory checker the streaming one replaced). Believed holding intervals: from a process's `acquire ok` until it stops believing it holds
//! the lock (release invoke, lost renew, retirement, crash, or its last event). A release that
//! comes back `fail` does not end it, unless another process was granted the lock since it
//! began; kept so, it ends at the next grant of the lock to another process (the streaming
//! checker's rule, [`crate::lock::stream::holdings::Release::Kept`]). Leases are not modelled
//! (the generated histories carry none).

use super::ops::{Op, Ops};
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
    /// When that acquire was invoked.
    pub asked_ns: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Index of the event that ended it.
    pub end_index: u64,
    pub end: EndReason,
    /// Writes (positions in `Ops::ops`) the process invoked while holding.
    pub writes: Vec<usize>,
    /// Where its release stands while it is open.
    release: Rel,
    /// Whether a release of it came back `fail` (it was kept, at least for a while).
    pub kept: bool,
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
        let mut w = Walk {
            p,
            crash: ops.crash.get(&p).copied(),
            open: Vec::new(),
            list: &mut list,
            grants: &grants,
        };
        for &at in &ops.by_process[&p] {
            if !w.op(at, &ops.ops[at]) {
                break;
            }
        }
        w.supersede(u64::MAX);
        let (end, why) = match w.crash {
            Some(c) => (c, EndReason::Crashed),
            None => ((ops.end_ns, ops.end_index), EndReason::HistoryEnd),
        };
        w.close(&|_| false, end, why);
    }
    list.sort_by_key(|h| (h.process, h.start_ns, h.acquire_index));
    for (i, h) in list.iter().enumerate() {
        for &w in &h.writes {
            of_write.entry(w).or_insert(i);
        }
    }
    Holdings { list, of_write }
}

/// One process's operations, walked in order: its open holdings, and where the closed go.
struct Walk<'a, 'l> {
    p: u64,
    crash: Option<(u64, u64)>,
    open: Vec<Holding<'a>>,
    list: &'l mut Vec<Holding<'a>>,
    grants: &'l Grants<'a>,
}

impl<'a> Walk<'a, '_> {
    /// Closes the open holdings `keep` refuses at `at` for `why`; one with a release in flight
    /// ended at that release's invocation.
    fn close(&mut self, keep: &dyn Fn(&Holding<'a>) -> bool, at: (u64, u64), why: EndReason) {
        let mut i = 0;
        while i < self.open.len() {
            if keep(&self.open[i]) {
                i += 1;
                continue;
            }
            let mut h = self.open.swap_remove(i);
            let (at, why) = match h.release {
                Rel::Pending(t, i) => ((t, i), EndReason::Released),
                Rel::None | Rel::Kept(_) => (at, why),
            };
            h.end_ns = at.0.max(h.start_ns);
            h.end_index = at.1;
            h.end = why;
            self.list.push(h);
        }
    }

    /// Closes the kept holdings whose superseding grant came before history index `before`
    /// (at the process's crash, if that came before the grant).
    fn supersede(&mut self, before: u64) {
        let due: Vec<(u64, u64)> = self
            .open
            .iter()
            .filter_map(|h| match h.release {
                Rel::Kept(Some(g)) if g.1 < before => Some(g),
                _ => None,
            })
            .collect();
        for g in due {
            let by_g = |h: &Holding<'a>| matches!(h.release, Rel::Kept(Some(k)) if k == g);
            for h in self.open.iter_mut().filter(|h| by_g(h)) {
                h.closed_at = g.1;
            }
            let (at, why) = match self.crash.filter(|c| c.0 < g.0) {
                Some(c) => (c, EndReason::Crashed),
                None => (g, EndReason::Superseded),
            };
            self.close(&|h| !by_g(h), at, why);
        }
    }

    /// Operation `op` (at `at` in `Ops::ops`); false once it retired the process.
    fn op(&mut self, at: usize, op: &Op<'a>) -> bool {
        self.supersede(op.invoke.index);
        if let Some(c) = self.crash.filter(|c| c.0 < op.invoke.time_ns) {
            self.close(&|_| false, c, EndReason::Crashed);
        }
        match op.f {
            F::Release => {
                for h in self.open.iter_mut().filter(|h| concerns(op.lock, h.lock)) {
                    h.release = Rel::Pending(op.invoke.time_ns, op.invoke.index);
                }
            }
            F::Write => {
                let named = self.open.iter().any(|h| h.lock == op.lock);
                for h in self.open.iter_mut() {
                    if !named || h.lock == op.lock {
                        h.writes.push(at);
                    }
                }
            }
            _ => {}
        }
        let Some(c) = op.completion else {
            return true;
        };
        self.supersede(c.index);
        let completed = (c.time_ns, c.index);
        let pending = |h: &Holding<'a>| matches!(h.release, Rel::Pending(..));
        match (c.kind, op.f) {
            (EventKind::Info, _) => {
                self.close(&|_| false, completed, EndReason::Retired);
                return false;
            }
            (EventKind::Ok, F::Release) => {
                self.close(&|h| !pending(h), completed, EndReason::Released)
            }
            (EventKind::Fail, F::Release) => self.release_failed(c.index),
            (EventKind::Ok, F::Acquire) => {
                self.close(&|h| h.lock != op.lock, completed, EndReason::Reacquired);
                self.open.push(Holding {
                    process: self.p,
                    lock: op.lock,
                    token: c.value.token,
                    acquire_index: c.index,
                    asked_ns: op.invoke.time_ns,
                    start_ns: c.time_ns,
                    end_ns: c.time_ns,
                    end_index: c.index,
                    end: EndReason::HistoryEnd,
                    writes: Vec::new(),
                    release: Rel::None,
                    kept: false,
                    closed_at: u64::MAX,
                });
            }
            (EventKind::Fail, F::Renew) => {
                self.close(&|h| !concerns(op.lock, h.lock), completed, EndReason::Lost)
            }
            _ => {}
        }
        true
    }

    /// The release in flight came back `fail` at history index `index`: a holding another
    /// process's grant passed over since it began ended at the release's invocation; the
    /// others are kept until the next such grant.
    fn release_failed(&mut self, index: u64) {
        let (p, grants) = (self.p, self.grants);
        let pending = |h: &Holding<'a>| matches!(h.release, Rel::Pending(..));
        let passed_over = |h: &Holding<'a>| {
            next_other(grants, h.lock, p, h.acquire_index).is_some_and(|g| g.0 < index)
        };
        // The time is the pending release's, whatever is given here.
        self.close(
            &|h| !pending(h) || !passed_over(h),
            (0, 0),
            EndReason::Released,
        );
        for h in self.open.iter_mut().filter(|h| pending(h)) {
            h.release = Rel::Kept(next_other(grants, h.lock, p, index).map(|g| (g.1, g.0)));
            h.kept = true;
        }
    }
}
