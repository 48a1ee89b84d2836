//! Growth pruning (see [`Spec::grows`]): when the operation about to be taken is followed, in
//! every linearization that extends the current one, by a completed read-only operation with
//! nothing but growing and read-only operations able to come in between, the state it leads
//! to must be able to grow into one where that read reads what it read. A dead end is then
//! found at once instead of after every ordering of the operations in between has been tried:
//! a kv key's concurrent appends are ordered by the next get's string as they are taken.
//!
//! The read is the not-yet-linearized completed one that returned first; only operations
//! invoked before it returned can come before it, so it is safe when none of those (the
//! operation being taken aside) may reset the state.

use super::linset::LinSet;
use super::spec::Spec;

const NONE: u32 = u32::MAX;
/// Marks a rank in `Growth::resets` rather than `Growth::reads`.
const RESET: u32 = 1 << 31;

/// An operation's real-time interval as a search sees it.
#[derive(Debug, Clone, Copy)]
pub struct Span {
    pub call: u64,
    /// `None` when its outcome is unknown: it may take effect any time after its call, or never.
    pub ret: Option<u64>,
}

/// The completed reads by return and the resetting operations by call, each with the first
/// one not yet linearized, kept up to date as the search takes and undoes operations.
pub struct Growth {
    /// Completed read-only operations by return, and those returns.
    reads: Vec<u32>,
    read_ret: Vec<u64>,
    first_read: usize,
    /// Operations neither read-only nor growing, by call, and those calls.
    resets: Vec<u32>,
    reset_call: Vec<u64>,
    first_reset: usize,
    /// Per operation, its place in `reads`, or in `resets` with `RESET` set, or `NONE`.
    rank: Vec<u32>,
}

impl Growth {
    /// `spans[i]` is `None` for an operation left out of the search. `None` when no operation
    /// grows: there is nothing to prune.
    pub fn new<S: Spec>(spec: &S, spans: &[Option<Span>], read_only: &[bool]) -> Option<Growth> {
        let n = spans.len();
        if !(0..n).any(|i| spans[i].is_some() && !read_only[i] && spec.grows(i)) {
            return None;
        }
        let mut reads: Vec<(u64, u32)> = (0..n)
            .filter(|&i| read_only[i])
            .filter_map(|i| Some((spans[i]?.ret?, i as u32)))
            .collect();
        reads.sort_unstable();
        let mut resets: Vec<(u64, u32)> = (0..n)
            .filter(|&i| !read_only[i] && !spec.grows(i))
            .filter_map(|i| Some((spans[i]?.call, i as u32)))
            .collect();
        resets.sort_unstable();
        let mut rank = vec![NONE; n];
        for (r, &(_, i)) in reads.iter().enumerate() {
            rank[i as usize] = r as u32;
        }
        for (r, &(_, i)) in resets.iter().enumerate() {
            rank[i as usize] = r as u32 | RESET;
        }
        Some(Growth {
            read_ret: reads.iter().map(|r| r.0).collect(),
            reads: reads.iter().map(|r| r.1).collect(),
            first_read: 0,
            reset_call: resets.iter().map(|r| r.0).collect(),
            resets: resets.iter().map(|r| r.1).collect(),
            first_reset: 0,
            rank,
        })
    }

    /// The read that the state after taking `op` (not read-only, not yet in `lin`) must be
    /// able to grow into, if there is one.
    #[inline]
    pub fn witness(&self, op: usize, lin: &LinSet) -> Option<usize> {
        let &read = self.reads.get(self.first_read)?;
        let read_ret = self.read_ret[self.first_read];
        let mut r = self.first_reset;
        while r < self.resets.len()
            && (self.resets[r] as usize == op || lin.contains(self.resets[r] as usize))
        {
            r += 1;
        }
        if r < self.resets.len() && self.reset_call[r] <= read_ret {
            // At equal times a call sorts before a return: that reset may come first.
            return None;
        }
        Some(read as usize)
    }

    /// After `op` was added to `lin`.
    #[inline]
    pub fn taken(&mut self, op: usize, lin: &LinSet) {
        let r = self.rank[op];
        if r == NONE {
        } else if r & RESET == 0 {
            if r as usize == self.first_read {
                while self.first_read < self.reads.len()
                    && lin.contains(self.reads[self.first_read] as usize)
                {
                    self.first_read += 1;
                }
            }
        } else if (r & !RESET) as usize == self.first_reset {
            while self.first_reset < self.resets.len()
                && lin.contains(self.resets[self.first_reset] as usize)
            {
                self.first_reset += 1;
            }
        }
    }

    /// After `op` was taken out of the linearization.
    #[inline]
    pub fn undone(&mut self, op: usize) {
        let r = self.rank[op];
        if r == NONE {
        } else if r & RESET == 0 {
            self.first_read = self.first_read.min(r as usize);
        } else {
            self.first_reset = self.first_reset.min((r & !RESET) as usize);
        }
    }
}
