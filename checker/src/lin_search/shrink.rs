//! Narrowing a violation down for a reader: the shortest prefix of the part's history that is
//! already not linearizable, the operation whose return makes it so (the first operation
//! after which no linearization exists), the operations concurrent with it, and those that
//! force it: without any one of them that prefix is linearizable.

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
    /// History indices of the operations that force the violation, in invocation order: of
    /// the window and the last [`FORCING_TRIED`] operations of the longest linearizable
    /// prefix, those without which the shortest failing prefix is linearizable.
    pub forcing: Vec<usize>,
}

/// How many of the last operations of the longest linearizable prefix are tried as forcing
/// the violation, beside the window: the state they leave is what the culprit cannot follow;
/// each try is one search of the failing prefix.
pub const FORCING_TRIED: usize = 8;

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
            forcing: Vec::new(),
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
    let forcing = match culprit {
        Some(c) => forcing(part, history, cut, c, &window, &failure, limits),
        None => Vec::new(),
    };
    Shrunk {
        failure,
        culprit,
        window,
        forcing,
    }
}

/// Of the window and the tail of the longest linearizable prefix, the operations other than
/// the culprit `c` without which the history up to `cut` is linearizable (a search that
/// runs out of budget proves nothing and names none).
fn forcing<S: Spec>(
    part: &Part<S>,
    history: &History,
    cut: u64,
    c: usize,
    window: &[usize],
    failure: &Failure,
    limits: &Limits,
) -> Vec<usize> {
    let tail = failure.prefix.len().saturating_sub(FORCING_TRIED);
    let mut tried: Vec<usize> = window
        .iter()
        .chain(&failure.prefix[tail..])
        .copied()
        .filter(|&h| h != c)
        .collect();
    tried.sort_by_key(|&h| history.ops[h].call);
    tried.dedup();
    tried
        .into_iter()
        .filter(|&h| {
            let Some(at) = part.ops.iter().position(|&o| o == h) else {
                return false;
            };
            let mut probe = Search::leaving_out(part.clone(), history, cut, Some(at));
            matches!(
                probe.run(u64::MAX, history, limits),
                Some(PartOutcome::Linearizable)
            )
        })
        .collect()
}
