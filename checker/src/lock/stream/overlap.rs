//! Double holders and the most concurrent holders, per lock, as holdings open and close.
//!
//! The rule is the in-memory sweep's: holding `b` overlaps an earlier-started holding `a` of
//! another process on the same lock when `a` ends strictly after `b` starts and `b` is not
//! zero-length; each (earlier holding, later process) pair is reported once, at the later
//! process's first such holding. Because an open holding's end is only known when it closes,
//! each lock keeps the holdings started since its oldest open holding (a window that is short
//! unless a holder's process falls silent) and settles them as the holdings around them close.

use super::culprit::Cause;
use super::holdings::{Holding, WriteRef};
use std::collections::{HashMap, VecDeque};

/// A holding's part in the sweep of its lock.
#[derive(Debug)]
struct Start {
    process: u64,
    start_ns: u64,
    /// Holdings active when it started, itself included (settled so far).
    count: u64,
    /// Holdings open when it started that have not closed yet.
    waiting: u32,
    /// `None` while open.
    closed: Option<Holding>,
    /// Earlier holdings that end after it starts, waiting for it to close to know whether it
    /// is zero-length.
    pairs: Vec<Holding>,
    /// What made its grant possible, per earlier holding open then (by id).
    causes: Vec<(u64, Cause)>,
}

impl Start {
    fn cause(&self, earlier: u64) -> Cause {
        self.causes
            .iter()
            .find(|(id, _)| *id == earlier)
            .map(|(_, c)| c.clone())
            .unwrap_or_default()
    }
}

#[derive(Debug, Default)]
struct LockSweep {
    /// Holdings started since the oldest one not settled, by id order; `first` is the
    /// sequence number (per lock) of the front.
    starts: VecDeque<Start>,
    first: u64,
    /// Per open holding id, its sequence number.
    open: HashMap<u64, u64>,
}

/// Two holdings found to overlap, both closed, and what made the later grant possible.
#[derive(Debug)]
pub(crate) struct Pair {
    pub earlier: Holding,
    pub later: Holding,
    pub cause: Cause,
}

/// The sweep over every lock.
#[derive(Debug, Default)]
pub(crate) struct Overlaps {
    locks: HashMap<u32, LockSweep>,
    /// Most holdings of one lock active at one instant.
    pub max_concurrent: u64,
}

/// `h` with only the writes invoked in `[from, to]`.
fn within(h: &Holding, from: u64, to: u64) -> Holding {
    let writes: Vec<WriteRef> = h
        .writes
        .iter()
        .filter(|w| (from..=to).contains(&w.invoke_ns))
        .copied()
        .collect();
    Holding {
        writes,
        ..h.clone()
    }
}

/// The pair with each holding's writes cut to the overlap.
fn pair(a: &Holding, b: &Holding, cause: Cause) -> Pair {
    let from = a.start_ns.max(b.start_ns);
    let to = a.end_ns.min(b.end_ns);
    Pair {
        earlier: within(a, from, to),
        later: within(b, from, to),
        cause,
    }
}

impl Overlaps {
    /// `h` opened; `causes` are what made its grant possible, per earlier open holding.
    pub fn opened(&mut self, h: &Holding, causes: Vec<(u64, Cause)>) {
        let sweep = self.locks.entry(h.lock).or_default();
        let seq = sweep.first + sweep.starts.len() as u64;
        sweep.starts.push_back(Start {
            process: h.process,
            start_ns: h.start_ns,
            count: 1,
            waiting: sweep.open.len() as u32,
            closed: None,
            pairs: Vec::new(),
            causes,
        });
        sweep.open.insert(h.id, seq);
    }

    /// `h` closed; overlaps it proves are handed to `found`.
    pub fn closed(&mut self, h: Holding, found: &mut impl FnMut(Pair)) {
        let Some(sweep) = self.locks.get_mut(&h.lock) else {
            return;
        };
        let Some(seq) = sweep.open.remove(&h.id) else {
            return;
        };
        let at = (seq - sweep.first) as usize;
        let nonzero = h.end_ns > h.start_ns;
        // Its own start: pairs waiting for it to be known non-zero.
        let own = &mut sweep.starts[at];
        for a in std::mem::take(&mut own.pairs) {
            if nonzero {
                found(pair(&a, &h, own.cause(a.id)));
            }
        }
        // Later starts, all begun while it was open. Per later process, the first of its
        // non-zero holdings that starts before `h` ends is the one paired with `h`.
        let mut paired: Vec<u64> = Vec::new();
        for later in sweep.starts.range_mut(at + 1..) {
            later.waiting -= 1;
            if h.end_ns <= later.start_ns {
                continue;
            }
            later.count += 1;
            if later.process == h.process || paired.contains(&later.process) {
                continue;
            }
            match &later.closed {
                Some(b) if b.end_ns > b.start_ns => {
                    paired.push(later.process);
                    found(pair(&h, b, later.cause(h.id)));
                }
                Some(_) => {}
                None => {
                    paired.push(later.process);
                    later.pairs.push(h.clone());
                }
            }
        }
        sweep.starts[at].closed = Some(h);
        // Settle the front.
        while let Some(front) = sweep.starts.front() {
            let Some(c) = &front.closed else { break };
            if front.waiting > 0 {
                break;
            }
            if c.end_ns > c.start_ns {
                self.max_concurrent = self.max_concurrent.max(front.count);
            }
            sweep.starts.pop_front();
            sweep.first += 1;
        }
    }
}
