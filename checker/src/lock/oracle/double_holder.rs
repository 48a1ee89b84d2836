//! Test oracle (the in-memory checker the streaming one replaced): Double holders: two processes whose believed holding intervals on the same lock overlap.
//! Found with a sweep over intervals sorted by start, so the cost is O(n log n) plus the number
//! of overlapping pairs.

use super::super::report::{Capped, Finding};
use super::holding::{Holding, Holdings};
use super::ops::Ops;
use crate::faults::FaultWindow;
use crate::lock::stream;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

/// Double holders found, one per holding interval and other process (a long holding that
/// several holdings of one other process overlap is one story), and the most processes that
/// believed they held one lock at one instant. Once the list is full, `findings.omitted`
/// counts further overlapping interval pairs, which may repeat a pair of processes.
pub(crate) struct DoubleHolders {
    pub findings: Capped,
    pub max_concurrent: u64,
}

pub(crate) fn double_holders(
    ops: &Ops<'_>,
    holdings: &Holdings<'_>,
    faults: &[FaultWindow],
) -> DoubleHolders {
    let list = &holdings.list;
    let mut by_lock: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, h) in list.iter().enumerate() {
        // A zero-length interval cannot overlap anything strictly.
        if h.end_ns > h.start_ns {
            by_lock.entry(h.lock).or_default().push(i);
        }
    }
    let mut locks: Vec<&str> = by_lock.keys().copied().collect();
    locks.sort_unstable();

    let mut findings = Capped::default();
    let mut max_concurrent = 0u64;
    let mut reported: HashSet<(usize, u64)> = HashSet::new();
    for lock in locks {
        let mut order = by_lock.remove(lock).unwrap_or_default();
        order.sort_by_key(|&i| (list[i].start_ns, list[i].acquire_index));
        // Min-heap on end time: every interval left in it after popping those that ended by
        // `start_ns` overlaps the new interval strictly.
        let mut active: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
        for i in order {
            let h = &list[i];
            while active
                .peek()
                .is_some_and(|Reverse((end, _))| *end <= h.start_ns)
            {
                active.pop();
            }
            // Every interval still active overlaps this one. A process's own intervals on one
            // lock never overlap, so the count needs no filtering; the listing filters anyway.
            if findings.is_full() {
                findings.count(active.len() as u64);
            } else {
                let mut earlier: Vec<usize> = active
                    .iter()
                    .map(|Reverse((_, j))| *j)
                    .filter(|&j| list[j].process != h.process)
                    .collect();
                earlier.sort_by_key(|&j| (list[j].start_ns, list[j].acquire_index));
                for j in earlier {
                    let e = &list[j];
                    // Per earlier interval and later process: a later pause of the same pair of
                    // processes is a new episode and is reported again.
                    let key = (j, h.process);
                    if reported.insert(key) {
                        findings.push_with(|| describe(ops, holdings, e, h, faults));
                    }
                }
            }
            active.push(Reverse((h.end_ns, i)));
            max_concurrent = max_concurrent.max(active.len() as u64);
        }
    }
    DoubleHolders {
        findings,
        max_concurrent,
    }
}

/// The finding for `a` (the earlier holder) overlapping `b`, worded by the streaming checker.
fn describe(
    ops: &Ops<'_>,
    held: &Holdings<'_>,
    a: &Holding<'_>,
    b: &Holding<'_>,
    faults: &[FaultWindow],
) -> Finding {
    let (from, to) = (a.start_ns.max(b.start_ns), a.end_ns.min(b.end_ns));
    let cut = |h: &Holding<'_>| stream::holdings::Holding {
        id: 0,
        process: h.process,
        lock: 0,
        token: h.token,
        acquire_index: h.acquire_index,
        asked_ns: h.asked_ns,
        start_ns: h.start_ns,
        end_ns: h.end_ns,
        end_index: h.end_index,
        end: h.end,
        writes: h
            .writes
            .iter()
            .map(|&w| &ops.ops[w])
            .filter(|op| (from..=to).contains(&op.invoke.time_ns))
            .map(|op| stream::holdings::WriteRef {
                invoke_ns: op.invoke.time_ns,
                invoke_index: op.invoke.index,
                done_index: op.completion.map(|c| c.index).filter(|&i| i < h.closed_at),
            })
            .collect(),
        lease: None,
        kept: h.kept,
        release: stream::holdings::Release::None,
    };
    let culprit = super::culprit::culprit(ops, held, a, b);
    stream::double_sentence::double(a.lock, &cut(a), &cut(b), culprit, faults)
}
