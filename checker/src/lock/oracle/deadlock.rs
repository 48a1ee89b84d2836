//! Test oracle (the in-memory checker the streaming one replaced): Deadlocks: long fault-free stretches in which clients keep asking for a lock and no acquire
//! succeeds. Built from merged "wanting" intervals, cut at every successful acquire, minus the
//! fault windows.

use super::super::report::{Finding, FindingKind, TimeWindow};
use super::holding::Holdings;
use super::ops::Ops;
use crate::faults::{active_during, secs, FaultWindow};
use crate::history::{EventKind, F};
use std::collections::HashMap;

/// How many failed acquires a deadlock finding lists as evidence.
const MAX_FAILS_LISTED: usize = 10;

/// Per lock, what the sweep needs.
#[derive(Default)]
struct LockTimeline {
    /// Intervals in which some process wanted the lock: from its first acquire invoke, across
    /// failed retries, until an acquire succeeded, it was retired, or it stopped trying.
    wanting: Vec<(u64, u64)>,
    /// Successful acquires: (completion time, completion index, process, token).
    grants: Vec<(u64, u64, u64, Option<u64>)>,
    /// Failed acquires: (completion time, completion index, process).
    fails: Vec<(u64, u64, u64)>,
}

/// Precondition: `deadlock_ns > 0`.
pub(crate) fn deadlocks(
    ops: &Ops<'_>,
    holdings: &Holdings<'_>,
    faults: &[FaultWindow],
    deadlock_ns: u64,
) -> Vec<Finding> {
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
                        .push((since, last));
                }
                continue;
            }
            let since = wanting.get(op.lock).map_or(op.invoke.time_ns, |w| w.0);
            let tl = timelines.entry(op.lock).or_default();
            match op.completion {
                None => {
                    wanting.remove(op.lock);
                    tl.wanting.push((since, stop.max(since)));
                }
                Some(c) => match c.kind {
                    EventKind::Fail => {
                        tl.fails.push((c.time_ns, c.index, p));
                        wanting.insert(op.lock, (since, c.time_ns));
                    }
                    kind => {
                        wanting.remove(op.lock);
                        tl.wanting.push((since, c.time_ns));
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
                .push((since, last));
        }
    }

    let mut calm: Vec<(u64, u64)> = faults
        .iter()
        .filter(|w| !w.is_instant())
        .map(|w| (w.start_ns, w.end_ns))
        .collect();
    let faulty = merge(&mut calm);

    let mut locks: Vec<&str> = timelines.keys().copied().collect();
    locks.sort_unstable();
    let mut findings = Vec::new();
    for lock in locks {
        let tl = timelines.get_mut(lock).expect("lock listed");
        tl.grants.sort_unstable();
        tl.fails.sort_unstable();
        for (s, e) in merge(&mut tl.wanting) {
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
                for (a, b) in subtract(piece[0], piece[1], &faulty) {
                    if b - a >= deadlock_ns {
                        findings.push(describe(holdings, faults, lock, tl, a, b));
                    }
                }
            }
        }
    }
    findings
}

/// Sorts and merges intervals that overlap or touch.
fn merge(intervals: &mut [(u64, u64)]) -> Vec<(u64, u64)> {
    intervals.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for &(s, e) in intervals.iter() {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// `[a, b]` minus the merged, sorted intervals `holes`.
fn subtract(a: u64, b: u64, holes: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut from = a;
    let first = holes.partition_point(|h| h.1 < a);
    for &(hs, he) in &holes[first..] {
        if hs > b {
            break;
        }
        if hs > from {
            out.push((from, hs));
        }
        from = from.max(he);
    }
    if from < b {
        out.push((from, b));
    }
    out
}

fn describe(
    holdings: &Holdings<'_>,
    faults: &[FaultWindow],
    lock: &str,
    tl: &LockTimeline,
    a: u64,
    b: u64,
) -> Finding {
    let lo = tl.fails.partition_point(|f| f.0 < a);
    let hi = tl.fails.partition_point(|f| f.0 <= b);
    let fails = &tl.fails[lo..hi];
    let mut trying: Vec<u64> = fails.iter().map(|f| f.2).collect();
    trying.sort_unstable();
    trying.dedup();
    let mut indices: Vec<u64> = fails.iter().take(MAX_FAILS_LISTED).map(|f| f.1).collect();
    let mut processes = Vec::new();
    let mut tokens = Vec::new();
    let last = tl.grants[..tl.grants.partition_point(|g| g.0 <= a)].last();
    let holder_phrase = match last {
        None => "nobody had held it before".to_string(),
        Some(&(t, index, p, token)) => {
            indices.push(index);
            processes.push(p);
            tokens.extend(token);
            let token_phrase = token.map_or_else(String::new, |t| format!(" (token {t})"));
            let end = holdings
                .list
                .iter()
                .find(|h| h.acquire_index == index)
                .filter(|h| h.end_ns <= b)
                .map_or_else(String::new, |h| {
                    indices.push(h.end_index);
                    format!(" and {} at {}", h.end.phrase(), secs(h.end_ns))
                });
            format!(
                "the last holder was process {p}{token_phrase}, which acquired it at {}{end}",
                secs(t)
            )
        }
    };
    for &t in &trying {
        if !processes.contains(&t) {
            processes.push(t);
        }
    }
    let trying_names: Vec<String> = trying.iter().map(|p| p.to_string()).collect();
    let summary = format!(
        "no process acquired lock {lock:?} for {} from {} to {} while clients wanted it ({} failed acquire(s) by process(es) {}); {holder_phrase}",
        secs(b - a),
        secs(a),
        secs(b),
        fails.len(),
        if trying_names.is_empty() { "none".to_string() } else { trying_names.join(", ") },
    );
    let mut f = Finding::new(FindingKind::Deadlock, summary).with_indices(indices);
    f.lock = (!lock.is_empty()).then(|| lock.to_string());
    f.processes = processes;
    f.tokens = tokens;
    f.window = Some(TimeWindow {
        start_ns: a,
        end_ns: b,
    });
    f.faults = active_during(faults, a, b).into_iter().cloned().collect();
    f
}
