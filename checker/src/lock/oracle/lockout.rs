//! Test oracle (the in-memory checker the streaming one replaced): Lockouts: long fault-free
//! stretches in which one process alone was granted (or held) a lock while others asked.
//! Built from the whole list of holdings at once: a process's stretch runs over its
//! consecutive holdings of the lock (none of another process's between; each a re-entry, or,
//! once a release in the stretch failed, starting less than the threshold after the previous
//! one ended), from its first grant to the end of its
//! last holding or the next grant to another process; the lockouts are the pieces of it the
//! other processes' wanting covers, minus the fault windows, at least the threshold long.

use super::deadlock::LockTimeline;
use super::holding::{EndReason, Holding, Holdings};
use crate::faults::FaultWindow;
use crate::lock::report::Finding;
use crate::lock::stream::lockout::{pieces, Stretch};
use crate::lock::stream::{describe, faulty};
use std::collections::HashMap;

/// Precondition: `threshold > 0`.
pub(crate) fn lockouts(
    holdings: &Holdings<'_>,
    timelines: &HashMap<&str, LockTimeline>,
    faults: &[FaultWindow],
    threshold: u64,
) -> Vec<Finding> {
    let faulty = faulty(faults);
    let mut by_lock: HashMap<&str, Vec<&Holding<'_>>> = HashMap::new();
    for h in &holdings.list {
        by_lock.entry(h.lock).or_default().push(h);
    }
    let mut locks: Vec<&str> = by_lock.keys().copied().collect();
    locks.sort_unstable();
    let mut findings = Vec::new();
    for lock in locks {
        let mut list = by_lock.remove(lock).unwrap_or_default();
        list.sort_by_key(|h| h.acquire_index);
        for mut st in stretches(&list, threshold) {
            if st.to - st.from < threshold {
                continue;
            }
            if let Some(tl) = timelines.get(lock) {
                for &(s, e, p) in &tl.wanting {
                    st.add_wanting(p, s, e);
                }
                st.fails = tl
                    .fails
                    .iter()
                    .filter(|f| f.2 != st.process && (st.from..=st.to).contains(&f.0))
                    .copied()
                    .collect();
            }
            for (a, b) in pieces(&st, &faulty, threshold) {
                findings.push(describe::lockout(lock, &st, a, b, faults));
            }
        }
    }
    findings
}

/// The stretches of one lock's holdings, in grant order.
fn stretches(list: &[&Holding<'_>], threshold: u64) -> Vec<Stretch> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < list.len() {
        let first = list[i];
        let mut st = Stretch::new(first.process, first.start_ns, true);
        st.grants.push((first.start_ns, first.acquire_index));
        let mut last = first;
        let mut held_over = first.kept;
        let mut j = i + 1;
        while let Some(h) = list.get(j).filter(|h| {
            h.process == first.process
                && (last.end == EndReason::Reacquired
                    || held_over && h.start_ns.saturating_sub(last.end_ns) < threshold)
        }) {
            st.grants.push((h.start_ns, h.acquire_index));
            held_over |= h.kept;
            last = h;
            j += 1;
        }
        st.end = Some((last.end_ns, last.end_index, last.end));
        // Cut at the next grant to another process, if its holding had not ended by then.
        let to = match list.get(j).filter(|h| h.process != first.process) {
            Some(next) => last.end_ns.min(next.start_ns),
            None => last.end_ns,
        };
        st.end_at(to);
        out.push(st);
        i = j;
    }
    out
}
