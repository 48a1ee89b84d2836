//! Test oracle (the in-memory checker the streaming one replaced): Deadlocks: long fault-free stretches in which clients keep asking for a free lock and no acquire
//! succeeds. Built from merged "wanting" intervals, cut at every successful acquire, minus the
//! fault windows and the time some process held the lock. Also gathers, per lock, who wanted
//! it when, for the lockouts ([`super::lockout`]).

use super::super::report::Finding;
use super::holding::Holdings;
use super::ops::Ops;
use crate::faults::FaultWindow;
use crate::history::{EventKind, F};
use crate::lock::stream::{self, deadlock::Segment};
use crate::lock::stream::{faulty, merge, subtract};
use std::collections::HashMap;

/// Per lock, what the sweep needs.
#[derive(Default)]
pub(crate) struct LockTimeline {
    /// Intervals in which some process wanted the lock: from its first acquire invoke, across
    /// failed retries, until an acquire succeeded, it was retired, or it stopped trying:
    /// (from, to, process).
    pub wanting: Vec<(u64, u64, u64)>,
    /// Successful acquires: (completion time, completion index, process, token).
    grants: Vec<(u64, u64, u64, Option<u64>)>,
    /// Failed acquires: (completion time, completion index, process).
    pub fails: Vec<(u64, u64, u64)>,
}

/// Every lock's wanting intervals, grants and failed acquires.
pub(crate) fn timelines<'a>(ops: &Ops<'a>) -> HashMap<&'a str, LockTimeline> {
    let mut timelines: HashMap<&str, LockTimeline> = HashMap::new();
    for (&p, list) in &ops.by_process {
        let stop = ops.crash.get(&p).map_or(ops.end_ns, |c| c.0);
        // lock → (wanting since, last failed acquire completed at)
        let mut wanting: HashMap<&str, (u64, u64)> = HashMap::new();
        for &at in list {
            let op = &ops.ops[at];
            if op.f != F::Acquire {
                // The process moved on: it stopped trying when its last acquire failed.
                for (lock, (since, last)) in wanting.drain() {
                    timelines
                        .entry(lock)
                        .or_default()
                        .wanting
                        .push((since, last, p));
                }
                continue;
            }
            let since = wanting.get(op.lock).map_or(op.invoke.time_ns, |w| w.0);
            let tl = timelines.entry(op.lock).or_default();
            match op.completion {
                None => {
                    wanting.remove(op.lock);
                    tl.wanting.push((since, stop.max(since), p));
                }
                Some(c) => match c.kind {
                    EventKind::Fail => {
                        tl.fails.push((c.time_ns, c.index, p));
                        wanting.insert(op.lock, (since, c.time_ns));
                    }
                    kind => {
                        wanting.remove(op.lock);
                        tl.wanting.push((since, c.time_ns, p));
                        if kind == EventKind::Ok {
                            tl.grants.push((c.time_ns, c.index, p, c.value.token));
                        }
                    }
                },
            }
        }
        for (lock, (since, last)) in wanting {
            timelines
                .entry(lock)
                .or_default()
                .wanting
                .push((since, last, p));
        }
    }
    timelines
}

/// Precondition: `deadlock_ns > 0`.
pub(crate) fn deadlocks(
    holdings: &Holdings<'_>,
    timelines: &mut HashMap<&str, LockTimeline>,
    faults: &[FaultWindow],
    deadlock_ns: u64,
) -> Vec<Finding> {
    let faulty = faulty(faults);

    let mut locks: Vec<&str> = timelines.keys().copied().collect();
    locks.sort_unstable();
    let mut findings = Vec::new();
    for lock in locks {
        let tl = timelines.get_mut(lock).expect("lock listed");
        tl.grants.sort_unstable();
        tl.fails.sort_unstable();
        // Not free while someone held it.
        let mut holes: Vec<(u64, u64)> = holdings
            .list
            .iter()
            .filter(|h| h.lock == lock)
            .map(|h| (h.start_ns, h.end_ns))
            .filter(|h| h.0 < h.1)
            .chain(faulty.iter().copied())
            .collect();
        let holes = merge(&mut holes);
        let mut wanting: Vec<(u64, u64)> = tl.wanting.iter().map(|w| (w.0, w.1)).collect();
        for (s, e) in merge(&mut wanting) {
            let first = tl.grants.partition_point(|g| g.0 <= s);
            let mut cuts: Vec<u64> = vec![s];
            cuts.extend(
                tl.grants[first..]
                    .iter()
                    .map(|g| g.0)
                    .take_while(|&g| g < e),
            );
            cuts.push(e);
            for piece in cuts.windows(2) {
                for (a, b) in subtract(piece[0], piece[1], &holes) {
                    if b - a >= deadlock_ns {
                        findings.push(describe(holdings, faults, lock, tl, a, b));
                    }
                }
            }
        }
    }
    findings
}

/// The finding for no grant of `lock` from `a` to `b`, worded by the streaming checker.
fn describe(
    holdings: &Holdings<'_>,
    faults: &[FaultWindow],
    lock: &str,
    tl: &LockTimeline,
    a: u64,
    b: u64,
) -> Finding {
    let grant = tl.grants[..tl.grants.partition_point(|g| g.0 <= a)]
        .last()
        .copied();
    let grant_end = grant.and_then(|g| {
        let h = holdings.list.iter().find(|h| h.acquire_index == g.1)?;
        Some((h.end_ns, h.end_index, h.end))
    });
    let seg = Segment {
        from: a,
        to: b,
        grant,
        grant_end,
        wanting: Vec::new(),
        held: Vec::new(),
        fails: tl.fails.clone(),
    };
    stream::describe::deadlock(lock, &seg, a, b, faults)
}
