//! Narrowing a violation down for a reader: the shortest prefix of the part's history that is
//! already not linearizable, the operation whose return makes it so, and the operations
//! concurrent with it.

use super::budget::Limits;
use super::op::History;
use super::search::{Failure, PartOutcome, Search};
use super::spec::{Part, Spec};

/// A violation narrowed to its shortest failing prefix.
pub struct Shrunk {
    /// The failure as seen by a search of the shortest failing prefix.
    pub failure: Failure,
    /// History index of the operation whose return ends that prefix.
    pub culprit: Option<usize>,
    /// History indices of the culprit and every operation of the prefix whose interval
    /// overlaps it, in invocation order.
    pub window: Vec<usize>,
}

/// Binary-searches the cut points (return positions) of an illegal part for the shortest
/// failing prefix. A probe that runs out of budget counts as passing, so the result is always
/// a prefix proven to fail, if not always the shortest.
pub fn shrink<S: Spec>(
    part: &Part<S>,
    history: &History,
    full: Failure,
    limits: &Limits,
) -> Shrunk {
    let mut cuts: Vec<u64> = part
        .ops
        .iter()
        .map(|&h| &history.ops[h])
        .filter(|op| !op.is_open())
        .filter_map(|op| op.ret)
        .collect();
    cuts.sort_unstable();
    let Some(&last) = cuts.last() else {
        return Shrunk {
            failure: full,
            culprit: None,
            window: Vec::new(),
        };
    };
    // cuts[hi] is known to fail (the whole part does); cuts[..=lo] are not shown to.
    let (mut lo, mut hi) = (None::<usize>, cuts.len() - 1);
    let mut failure = full;
    while lo.map_or(0, |l| l + 1) < hi {
        let mid = (lo.map_or(0, |l| l + 1) + hi) / 2;
        let mut probe = Search::with_cut(part.clone(), history, cuts[mid]);
        match probe.run(u64::MAX, history, limits) {
            Some(PartOutcome::Illegal(f)) => {
                hi = mid;
                failure = f;
            }
            _ => lo = Some(mid),
        }
    }
    let cut = if hi == cuts.len() - 1 { last } else { cuts[hi] };
    let culprit = part
        .ops
        .iter()
        .copied()
        .find(|&h| !history.ops[h].is_open() && history.ops[h].ret == Some(cut));
    let mut window: Vec<usize> = match culprit {
        Some(c) => {
            let (c_call, c_ret) = (history.ops[c].call, cut);
            part.ops
                .iter()
                .copied()
                .filter(|&h| {
                    let op = &history.ops[h];
                    let ret = if op.is_open() {
                        u64::MAX
                    } else {
                        op.ret.unwrap_or(u64::MAX)
                    };
                    op.call <= c_ret && ret >= c_call
                })
                .collect()
        }
        None => failure.pending.clone(),
    };
    window.sort_by_key(|&h| history.ops[h].call);
    Shrunk {
        failure,
        culprit,
        window,
    }
}
