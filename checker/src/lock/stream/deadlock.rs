//! Deadlocks, per lock: long stretches in which clients kept asking for a free lock and no
//! acquire succeeded, outside fault windows. A stretch in which some process held the lock is
//! not a deadlock (the lock was not free): if others asked while one process alone held it,
//! that is a lockout ([`super::lockout`]), which this module also feeds with who wanted the
//! lock when.
//!
//! Successful acquires ("grants") cut time into segments; a deadlock lies inside one segment,
//! so only segments at least the threshold long are kept (with the wanting intervals and the
//! failed acquires inside them) until the end, when the fault windows are known. Memory: the
//! current segment of each lock and the long ones, not the history.

use super::holdings::EndReason;
use super::lockout::{Lockouts, Stretch};
use std::collections::HashMap;

/// A successful acquire: (completion time, completion index, process, token).
pub(crate) type Grant = (u64, u64, u64, Option<u64>);

/// A segment between two grants of one lock (or before the first, or after the last).
#[derive(Debug, Default, Clone)]
pub(crate) struct Segment {
    /// Start: the time of the grant that opened it (0 before the first grant).
    pub from: u64,
    /// End: the next grant's time, or `u64::MAX` for the last segment.
    pub to: u64,
    /// The last grant at `from`, if any.
    pub grant: Option<Grant>,
    /// Wanting intervals, cut to the segment.
    pub wanting: Vec<(u64, u64)>,
    /// Holding intervals (as far as liveness goes: to their lease's end), cut to the segment:
    /// the lock was not free then.
    pub held: Vec<(u64, u64)>,
    /// Failed acquires: (completion time, completion index, process).
    pub fails: Vec<(u64, u64, u64)>,
    /// How the holding `grant` began ended: (time, index, why), once it did.
    pub grant_end: Option<(u64, u64, EndReason)>,
}

impl Segment {
    fn add_wanting(&mut self, s: u64, e: u64) {
        let (a, b) = (s.max(self.from), e.min(self.to));
        if a <= b && s <= self.to && e >= self.from {
            self.wanting.push((a, b));
        }
    }

    fn add_held(&mut self, s: u64, e: u64) {
        let (a, b) = (s.max(self.from), e.min(self.to));
        if a < b {
            self.held.push((a, b));
        }
    }

    /// The deadlocks in it: its merged wanting minus the merged `faulty` stretches and the
    /// time someone held the lock, pieces at least `threshold` long.
    pub(crate) fn deadlocks(&mut self, faulty: &[(u64, u64)], threshold: u64) -> Vec<(u64, u64)> {
        let mut holes: Vec<(u64, u64)> = faulty.iter().chain(&self.held).copied().collect();
        let holes = super::merge(&mut holes);
        let mut out = Vec::new();
        for (s, e) in super::merge(&mut self.wanting) {
            for (a, b) in super::subtract(s, e, &holes) {
                if b - a >= threshold {
                    out.push((a, b));
                }
            }
        }
        out
    }
}

#[derive(Debug, Default)]
struct LockTimeline {
    current: Segment,
    /// Closed segments at least the threshold long.
    long: Vec<Segment>,
}

/// Per process and lock: wanting since, last failed acquire completed at.
type Wanting = HashMap<(u64, u32), (u64, u64)>;

/// Why a process wants a lock now: an acquire in flight, a chain of failed ones, or both.
const IN_FLIGHT: u8 = 1;
const CHAIN: u8 = 2;

#[derive(Debug)]
pub(crate) struct Deadlocks {
    threshold_ns: u64,
    locks: HashMap<u32, LockTimeline>,
    wanting: Wanting,
    /// Per lock, the processes that want it now, with [`IN_FLIGHT`] and [`CHAIN`] bits: a
    /// lockout keeps a stretch's grants only once another process wanted the lock.
    askers: HashMap<u32, HashMap<u64, u8>>,
    lockouts: Lockouts,
}

impl Deadlocks {
    pub fn new(threshold_ns: u64) -> Self {
        Deadlocks {
            threshold_ns,
            locks: HashMap::new(),
            wanting: HashMap::new(),
            askers: HashMap::new(),
            lockouts: Lockouts::new(threshold_ns),
        }
    }

    fn mark(&mut self, p: u64, lock: u32, set: u8, clear: u8) {
        let a = self.askers.entry(lock).or_default();
        let bits = a.get(&p).copied().unwrap_or(0) & !clear | set;
        if bits == 0 {
            a.remove(&p);
        } else {
            a.insert(p, bits);
        }
    }

    /// `p`'s holding of `lock` began at `at` (time, `acquire ok` index).
    pub fn opened(&mut self, lock: u32, p: u64, at: (u64, u64)) {
        let others = self
            .askers
            .get(&lock)
            .is_some_and(|a| a.len() > usize::from(a.contains_key(&p)));
        self.lockouts.opened(lock, p, at, others);
    }

    /// `p`'s holding of `lock` begun at `acquire_index` at `start`, the lock surely not free
    /// until `not_free_until` (its lease counted from the grant's reply: a grant that came
    /// late is not free time, for a lockout's gaps as for a deadlock), ended at `end`;
    /// `kept`: a release of it had failed.
    pub fn closed(
        &mut self,
        lock: u32,
        p: u64,
        acquire_index: u64,
        (start, not_free_until): (u64, u64),
        end: (u64, u64, EndReason),
        kept: bool,
    ) {
        self.lockouts
            .closed(lock, p, acquire_index, not_free_until, end, kept);
        let tl = self.timeline(lock);
        tl.current.add_held(start, not_free_until);
        for seg in tl.long.iter_mut().rev() {
            if seg.to < start {
                break;
            }
            seg.add_held(start, not_free_until);
        }
        if let Some(seg) = tl
            .long
            .iter_mut()
            .chain(std::iter::once(&mut tl.current))
            .find(|s| s.grant.is_some_and(|g| g.1 == acquire_index))
        {
            seg.grant_end = Some(end);
        }
    }

    pub fn threshold_ns(&self) -> u64 {
        self.threshold_ns
    }

    fn timeline(&mut self, lock: u32) -> &mut LockTimeline {
        self.locks.entry(lock).or_insert_with(|| LockTimeline {
            current: Segment {
                to: u64::MAX,
                ..Segment::default()
            },
            long: Vec::new(),
        })
    }

    /// `p`'s wanting interval of `lock` ended: it goes to every segment and stretch it
    /// touches.
    fn push_wanting(&mut self, p: u64, lock: u32, s: u64, e: u64) {
        self.lockouts.wanting(lock, p, s, e);
        let tl = self.timeline(lock);
        tl.current.add_wanting(s, e);
        for seg in tl.long.iter_mut().rev() {
            if seg.to < s {
                break;
            }
            seg.add_wanting(s, e);
        }
    }

    /// `p` invoked an operation other than an acquire: it stopped trying when its last
    /// acquire failed.
    pub fn moved_on(&mut self, p: u64) {
        let mut done: Vec<(u32, u64, u64)> = Vec::new();
        self.wanting.retain(|&(q, lock), &mut (since, last)| {
            if q == p {
                done.push((lock, since, last));
            }
            q != p
        });
        done.sort_unstable();
        for (lock, since, last) in done {
            self.mark(p, lock, 0, CHAIN);
            self.push_wanting(p, lock, since, last);
        }
    }

    /// `p` invoked an acquire of `lock` at `at_ns`: returns the start of its wanting, the
    /// invocation unless it already wanted the lock.
    pub fn asked(&mut self, p: u64, lock: u32, at_ns: u64) -> u64 {
        self.mark(p, lock, IN_FLIGHT, 0);
        self.lockouts.asked(lock, p);
        self.wanting.get(&(p, lock)).map_or(at_ns, |w| w.0)
    }

    /// An acquire of `lock` by `p`, invoked wanting since `since`, failed at `at`.
    pub fn failed(&mut self, p: u64, lock: u32, since: u64, at: (u64, u64)) {
        self.mark(p, lock, CHAIN, IN_FLIGHT);
        self.lockouts.failed(lock, p, at);
        let tl = self.timeline(lock);
        tl.current.fails.push((at.0, at.1, p));
        // At the very instant of the grant that ended the previous segment: it belongs there
        // too.
        if let Some(prev) = tl.long.last_mut().filter(|s| s.to == at.0) {
            prev.fails.push((at.0, at.1, p));
        }
        self.wanting.insert((p, lock), (since, at.0));
    }

    /// An acquire ended (ok, info, or never): the wanting since `since` ended at `end_ns`.
    pub fn ended(&mut self, p: u64, lock: u32, since: u64, end_ns: u64) {
        self.mark(p, lock, 0, IN_FLIGHT | CHAIN);
        self.wanting.remove(&(p, lock));
        self.push_wanting(p, lock, since, end_ns);
    }

    /// A grant: a new segment starts.
    pub fn granted(&mut self, lock: u32, g: Grant) {
        let threshold = self.threshold_ns;
        let tl = self.timeline(lock);
        if g.0 == tl.current.from && tl.current.grant.is_some() {
            // Same instant as the grant that opened the segment: no cut, a later grant.
            tl.current.grant = Some(g);
            return;
        }
        let mut next = Segment {
            from: g.0,
            to: u64::MAX,
            grant: Some(g),
            grant_end: None,
            wanting: Vec::new(),
            held: Vec::new(),
            // Failed acquires at the very instant of the grant belong to both segments.
            fails: tl
                .current
                .fails
                .iter()
                .filter(|f| f.0 == g.0)
                .copied()
                .collect(),
        };
        // Wanting intervals reaching past the grant are still open; they are pushed when
        // they end, and cut to each segment then.
        std::mem::swap(&mut tl.current, &mut next);
        next.to = g.0;
        if next.to - next.from >= threshold {
            tl.long.push(next);
        }
    }

    /// The history ended (every holding has closed). Returns every lock's long segments (and
    /// its last one), and its long lockout stretches.
    pub fn finish(mut self) -> Finished {
        let mut left: Vec<((u64, u32), (u64, u64))> = self.wanting.drain().collect();
        left.sort_unstable();
        for ((p, lock), (since, last)) in left {
            self.push_wanting(p, lock, since, last);
        }
        let segments = self
            .locks
            .into_iter()
            .map(|(lock, mut tl)| {
                tl.long.push(tl.current);
                (lock, tl.long)
            })
            .collect();
        Finished {
            segments,
            stretches: self.lockouts.finish(),
        }
    }
}

/// What [`Deadlocks::finish`] hands over, per lock.
pub(crate) struct Finished {
    pub segments: HashMap<u32, Vec<Segment>>,
    pub stretches: HashMap<u32, Vec<Stretch>>,
}
