//! The two findings, per believed holding of a process P of lock L:
//!
//! - **Silent loss** at T: the number of L's nodes holding one of P's values drops below a
//!   majority of L's nodes (1 of 1, 2 of 3, 3 of 5) at T, no earlier than P's acquire was
//!   invoked (and after a set brought P's values to a majority since then) and no later than
//!   its holding's end; P's holding goes on past T, with its value
//!   still below a majority, by more than [`SILENCE_TOLERANCE_NS`]; and P was not warned:
//!   neither was its last notice at or before T (since its acquire) `lost` or `suspended` (a
//!   `reconnected` takes that back), nor did one come after T before its holding ended. One
//!   per holding, at its first such drop.
//! - **Silent re-take**: on one node and key, P's value expired, was deleted or went in a
//!   reset at T1 and the same value was set there again at T2 > T1, both within one of P's
//!   holdings, with no `lost` or `suspended` notice to P from T1 to T2.

use super::inputs::{Held, ServerInputs, Told, Window};
use super::records::Interval;
use super::{RecordEnd, SILENCE_TOLERANCE_NS, WATCH_LAG_NS};
use crate::history::F;
use std::collections::{BTreeMap, HashMap};

/// A silent loss of holding `held`.
#[derive(Debug)]
pub(crate) struct Loss<'a> {
    pub held: &'a Held,
    /// When P's value fell below a majority.
    pub at_ns: u64,
    /// The nodes that no longer held it then: P's last record on each, ended, oldest end first.
    pub lost: Vec<&'a Interval>,
    /// When it was back on a majority during the holding, if it was.
    pub back_ns: Option<u64>,
    /// Until when P believed while its value was below a majority: its holding's end, or
    /// `back_ns` if that came first.
    pub until_ns: u64,
    pub nodes: usize,
    pub majority: usize,
}

/// A silent re-take within holding `held`.
#[derive(Debug)]
pub(crate) struct Retake<'a> {
    pub held: &'a Held,
    pub before: &'a Interval,
    pub again: &'a Interval,
    /// P's renewal open when it was set again, if one was.
    pub renew: Option<&'a Window>,
}

/// The majority of `n` nodes.
pub(crate) fn majority(n: usize) -> usize {
    n / 2 + 1
}

/// What the sweep of one holding found.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Sweep {
    /// P's values were on a majority at some moment of the holding (from its acquire's
    /// invocation to its end): the server record can say whether it was lost.
    pub judged: bool,
    /// Each drop below a majority within the holding, and when it was back on one, if it was
    /// before the holding's end.
    pub drops: Vec<(u64, Option<u64>)>,
}

/// Sweeps the count of nodes holding P's value (`deltas`: +1 where a node's coverage begins,
/// −1 where it ends) over the holding from `asked` to `end`.
pub(crate) fn sweep(mut deltas: Vec<(u64, i64)>, asked: u64, end: u64, majority: i64) -> Sweep {
    // At one instant, gains before losses: a node taking over as another lets go is no dip.
    deltas.sort_by_key(|&(t, d)| (t, -d));
    let mut out = Sweep::default();
    let mut count = 0i64;
    // Whether P's values reached a majority by a set since `asked`: only then is a drop this
    // holding's. A value of P's earlier holding, deleted by its release and seen a little
    // after P asked again (the watcher's lag), ends that holding, not this one.
    let mut had = false;
    let mut i = 0;
    while i < deltas.len() && deltas[i].0 <= end {
        let t = deltas[i].0;
        let before = count;
        let mut rose = false;
        while i < deltas.len() && deltas[i].0 == t {
            count += deltas[i].1;
            rose |= deltas[i].1 > 0;
            i += 1;
        }
        if t < asked {
            continue;
        }
        if before >= majority && t > asked {
            out.judged = true;
        }
        if before >= majority && count < majority && had {
            out.drops.push((t, None));
        }
        had |= rose && count >= majority;
        if count >= majority {
            out.judged = true;
            if let Some((_, back @ None)) = out.drops.last_mut() {
                *back = Some(t);
            }
        }
    }
    if count >= majority {
        out.judged = true;
    }
    out
}

/// Whether P was warned about a loss at `t` in holding `h`: its last notice at or before `t`
/// (since the acquire's invocation) was `lost` or `suspended`, or one came after `t` before
/// the holding ended.
pub(crate) fn warned(told: &[&Told], h: &Held, t: u64) -> bool {
    let mine = told
        .iter()
        .filter(|n| n.process == h.process && n.ns >= h.asked_ns && n.ns <= h.end_ns);
    let last_before = mine.clone().rfind(|n| n.ns <= t);
    last_before.is_some_and(|n| n.warns()) || mine.clone().any(|n| n.ns > t && n.warns())
}

/// The silent losses and re-takes of one lock's holdings, and how many holdings could be
/// judged and how many not.
pub(crate) struct LockFindings<'a> {
    pub losses: Vec<Loss<'a>>,
    pub retakes: Vec<Retake<'a>>,
    pub judged: u64,
    pub not_judged: u64,
}

/// One process's records of the lock, by node, and the count deltas they make.
struct Mine<'a> {
    by_node: BTreeMap<&'a str, Vec<&'a Interval>>,
    deltas: Vec<(u64, i64)>,
}

/// The findings of lock `lock`, whose records are `intervals`' of that lock; `owner_of` says
/// whose an interval's value is.
pub(crate) fn find<'a>(
    lock: u32,
    intervals: &'a [Interval],
    owner_of: &dyn Fn(&Interval) -> Option<u64>,
    inputs: &'a ServerInputs,
) -> LockFindings<'a> {
    let of_lock: Vec<&Interval> = intervals.iter().filter(|iv| iv.lock == lock).collect();
    let mut nodes: Vec<&str> = of_lock.iter().map(|iv| iv.node.as_str()).collect();
    nodes.sort_unstable();
    nodes.dedup();
    let maj = majority(nodes.len());
    // Once per process, not per holding: a long run has many of both.
    let mut mine: HashMap<u64, Mine<'_>> = HashMap::new();
    for &iv in &of_lock {
        if let Some(p) = owner_of(iv) {
            let m = mine.entry(p).or_insert_with(|| Mine {
                by_node: BTreeMap::new(),
                deltas: Vec::new(),
            });
            m.by_node.entry(iv.node.as_str()).or_default().push(iv);
        }
    }
    for m in mine.values_mut() {
        m.deltas = deltas_of(m.by_node.values().map(Vec::as_slice));
    }
    let mut told: HashMap<u64, Vec<&Told>> = HashMap::new();
    for n in &inputs.told {
        told.entry(n.process).or_default().push(n);
    }
    let mut out = LockFindings {
        losses: Vec::new(),
        retakes: Vec::new(),
        judged: 0,
        not_judged: 0,
    };
    for h in inputs.held.iter().filter(|h| h.lock == lock) {
        let Some(m) = mine.get(&h.process) else {
            out.not_judged += 1;
            continue;
        };
        let told = told.get(&h.process).map_or(&[][..], Vec::as_slice);
        // Only P's records that can be this holding's: one whose value the history names
        // another of P's acquires' (a late reading of the holding before) is not.
        let theirs = |iv: &Interval| inputs.may_be_of(h, &iv.value);
        let all_theirs = m.by_node.values().flatten().all(|iv| theirs(iv));
        let deltas = if all_theirs {
            m.deltas.clone()
        } else {
            let kept: Vec<Vec<&Interval>> = (m.by_node.values())
                .map(|ivs| ivs.iter().copied().filter(|iv| theirs(iv)).collect())
                .collect();
            deltas_of(kept.iter().map(Vec::as_slice))
        };
        let s = sweep(deltas, h.asked_ns, h.end_ns, maj as i64);
        if s.judged {
            out.judged += 1;
        } else {
            out.not_judged += 1;
        }
        let until = |back: Option<u64>| back.unwrap_or(h.end_ns).min(h.end_ns);
        let silent = s.drops.iter().find(|(t, back)| {
            until(*back) > t.saturating_add(SILENCE_TOLERANCE_NS) && !warned(told, h, *t)
        });
        if let Some(&(t, back)) = silent {
            // Each node that no longer held P's value then: its last record, ended since the
            // acquire was invoked.
            let mut lost: Vec<&Interval> = m
                .by_node
                .values()
                .filter(|ivs| !ivs.iter().any(|iv| theirs(iv) && iv.covers(t)))
                .filter_map(|ivs| {
                    ivs.iter()
                        .filter(|iv| theirs(iv))
                        .filter(|iv| iv.end_ns() <= t && iv.end_ns() >= h.asked_ns)
                        .max_by_key(|iv| iv.end_ns())
                        .copied()
                })
                .collect();
            lost.sort_by_key(|iv| (iv.end_ns(), iv.node.clone()));
            out.losses.push(Loss {
                held: h,
                at_ns: t,
                lost,
                back_ns: back,
                until_ns: until(back),
                nodes: nodes.len(),
                majority: maj,
            });
        }
        for &again in m.by_node.values().flatten() {
            if let Some(r) = retake(h, again, intervals, told, inputs) {
                out.retakes.push(r);
            }
        }
    }
    out.retakes
        .sort_by_key(|r| (r.before.end_ns(), r.again.set_index));
    out
}

/// The count's steps of records `by_node` (each node's intervals): +1 where a node's
/// coverage starts, -1 where it ends.
fn deltas_of<'a>(by_node: impl Iterator<Item = &'a [&'a Interval]>) -> Vec<(u64, i64)> {
    let mut deltas = Vec::new();
    for ivs in by_node {
        for (s, e) in coverage(ivs) {
            deltas.push((s, 1));
            if e != u64::MAX {
                deltas.push((e, -1));
            }
        }
    }
    deltas
}

/// A silent re-take within holding `h` of `again`, one of its process's records, if it is
/// one: the record before it on its node and key held the same value and expired, was
/// deleted or went in a reset, within the holding, with no warning notice to the process
/// (`told`, its notices) in between.
fn retake<'a>(
    h: &'a Held,
    again: &'a Interval,
    intervals: &'a [Interval],
    told: &[&Told],
    inputs: &'a ServerInputs,
) -> Option<Retake<'a>> {
    let before = &intervals[again.after?];
    let end = before.end.as_ref()?;
    let gone = matches!(
        end.how,
        RecordEnd::Expired | RecordEnd::Deleted | RecordEnd::Reset
    );
    let (t1, t2) = (end.ns, again.start_ns);
    if !gone || before.value != again.value || t2 <= t1 || t1 < h.start_ns || t2 > h.end_ns {
        return None;
    }
    if told.iter().any(|n| n.ns >= t1 && n.ns <= t2 && n.warns()) {
        return None;
    }
    let renew = inputs.windows.iter().find(|w| {
        w.process == h.process
            && w.lock == h.lock
            && w.f == F::Renew
            && w.invoke_ns <= t2
            && w.done
                .is_none_or(|d| t2 <= d.0.saturating_add(WATCH_LAG_NS))
    });
    Some(Retake {
        held: h,
        before,
        again,
        renew,
    })
}

/// The stretches a node held any of `ivs` (one node's intervals of one process, by start),
/// merged; an open one runs to `u64::MAX`.
fn coverage(ivs: &[&Interval]) -> Vec<(u64, u64)> {
    let mut spans: Vec<(u64, u64)> = ivs.iter().map(|iv| (iv.start_ns, iv.end_ns())).collect();
    spans.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (s, e) in spans {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_count_falls_below_a_majority_once_and_comes_back() {
        // Five nodes: three hold from 0, two from 1; one lets go at 5 (4 left), two at 7 (2
        // left: lost), one comes back at 9.
        let deltas = vec![
            (0, 1),
            (0, 1),
            (0, 1),
            (1, 1),
            (1, 1),
            (5, -1),
            (7, -1),
            (7, -1),
            (8, -1),
            (9, 1),
            (9, 1),
        ];
        let s = sweep(deltas.clone(), 0, 20, 3);
        assert_eq!(
            s,
            Sweep {
                judged: true,
                drops: vec![(7, Some(9))],
            }
        );
        // A holding that ended before the drop lost nothing; one that ended before it was
        // back lost it for good.
        assert_eq!(sweep(deltas.clone(), 0, 6, 3).drops, vec![]);
        assert_eq!(sweep(deltas.clone(), 0, 8, 3).drops, vec![(7, None)]);
        // Never on a majority: not judged.
        assert!(!sweep(vec![(0, 1), (0, 1)], 0, 10, 3).judged);
        // A hand-over at one instant is no dip.
        assert_eq!(sweep(vec![(0, 1), (4, -1), (4, 1)], 0, 10, 1).drops, vec![]);
        // The value of an earlier holding (set at 0), gone at 5 after this one was asked at
        // 4, before this one's value came at 6: that holding's release seen late, no loss.
        let late = vec![(0, 1), (5, -1), (6, 1), (9, -1)];
        assert_eq!(sweep(late.clone(), 4, 8, 1).drops, vec![]);
        assert_eq!(sweep(late, 4, 12, 1).drops, vec![(9, None)]);
    }
}
