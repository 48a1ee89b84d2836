//! Lockouts, per lock: long stretches in which one process alone was granted (or held) a lock
//! while other processes asked for it and none of them got it, outside fault windows.
//!
//! The lock is not free in a lockout (that would be a deadlock): its holder keeps it, or keeps
//! getting it back, as a holder whose release failed and who re-enters does, or a library
//! watchdog that renews a lock nobody releases. A *stretch* of process P follows P's holdings
//! of the lock from its first grant after another process's grant: a later holding of P
//! continues the stretch when P acquired it again while still holding (re-entry), or when a
//! release of P's in the stretch failed and the later holding began less than the threshold
//! after the previous one ended (the lock may have stayed P's at its server through the gap, a
//! re-entrant count above zero, so P came back before a deadlock could have been found in it).
//! Otherwise P's releases came back ok and the lock was free in every gap: P winning it again
//! while others waited is the lock choosing between askers, which a lock need not do fairly
//! (a polling lock on one Redis hands it to whoever asks first), not a lockout. A grant to
//! another process, or a longer gap, ends a stretch. The stretch ends where P's last holding in it ended
//! (as far as liveness goes: at its lease's end if that came first), or at the other
//! process's grant that cut it. Inside a stretch, a lockout is a piece that other processes'
//! wanting covers, minus fault windows, at least the threshold long.
//!
//! The threshold is the deadlock threshold (`deadlock_ms`): a scenario sets it above the
//! longest hold its workload asks for, so no ordinary hold or run of holds is that long, and
//! a stretch in which the others waited that long is as stuck as one in which nobody got the
//! lock.
//!
//! Memory: per lock, the current stretch (its grants only once another process has asked),
//! the stretches cut while their holder still held the lock, and the long ones, kept until the
//! end when the fault windows are known.

use super::holdings::EndReason;
use std::collections::HashMap;

/// One process's stretch of a lock.
#[derive(Debug, Clone)]
pub(crate) struct Stretch {
    pub process: u64,
    pub from: u64,
    /// `u64::MAX` until it ended.
    pub to: u64,
    /// The process's grants in it: (time, index). While no other process has asked, only the
    /// grants of the latest instant are kept: no lockout piece can hold the earlier ones.
    pub grants: Vec<(u64, u64)>,
    /// Other processes' wanting intervals cut to the stretch, none of zero length: (from, to,
    /// process).
    pub wanting: Vec<(u64, u64, u64)>,
    /// Other processes' failed acquires: (completion time, completion index, process).
    pub fails: Vec<(u64, u64, u64)>,
    /// How the process's last holding in it ended: (time, index, why).
    pub end: Option<(u64, u64, EndReason)>,
    /// Whether another process wanted the lock since the stretch began.
    asked: bool,
    /// Whether a release of the process's in the stretch failed, so the lock may have stayed
    /// its at the server through later releases.
    pub held_over: bool,
}

impl Stretch {
    pub(crate) fn new(process: u64, from: u64, asked: bool) -> Stretch {
        Stretch {
            process,
            from,
            to: u64::MAX,
            grants: Vec::new(),
            wanting: Vec::new(),
            fails: Vec::new(),
            end: None,
            asked,
            held_over: false,
        }
    }

    fn grant(&mut self, at: (u64, u64)) {
        if !self.asked && self.grants.last().is_some_and(|g| g.0 < at.0) {
            self.grants.clear();
        }
        self.grants.push(at);
    }

    /// Another process's wanting from `s` to `e`, cut to the stretch.
    pub(crate) fn add_wanting(&mut self, p: u64, s: u64, e: u64) {
        let (a, b) = (s.max(self.from), e.min(self.to));
        if p != self.process && a < b {
            self.wanting.push((a, b, p));
        }
    }

    /// Ends the stretch at `to`, dropping what lies after.
    pub(crate) fn end_at(&mut self, to: u64) {
        self.to = to;
        self.wanting.retain_mut(|w| {
            w.1 = w.1.min(to);
            w.0 < w.1
        });
        self.fails.retain(|f| f.0 <= to);
    }
}

/// The current stretch of a lock: whose holding it follows, whether that is still open, and
/// when the last one ended.
#[derive(Debug)]
struct Current {
    stretch: Stretch,
    /// `acquire ok` index of the process's latest holding.
    holding: u64,
    open: bool,
    last_end: u64,
}

/// A stretch another process's grant cut at `cut` while its holding was still open: it ends
/// at that holding's end or at `cut`, whichever is first.
#[derive(Debug)]
struct Cut {
    stretch: Stretch,
    holding: u64,
    cut: u64,
}

#[derive(Debug, Default)]
struct LockRuns {
    current: Option<Current>,
    cut: Vec<Cut>,
    /// Ended stretches at least the threshold long, by start (they do not overlap).
    long: Vec<Stretch>,
}

impl LockRuns {
    fn finalize(&mut self, mut st: Stretch, to: u64, threshold: u64) {
        st.end_at(to);
        if st.to - st.from >= threshold {
            let at = self.long.partition_point(|l| l.from <= st.from);
            self.long.insert(at, st);
        }
    }
}

#[derive(Debug)]
pub(crate) struct Lockouts {
    threshold_ns: u64,
    locks: HashMap<u32, LockRuns>,
}

impl Lockouts {
    pub fn new(threshold_ns: u64) -> Self {
        Lockouts {
            threshold_ns,
            locks: HashMap::new(),
        }
    }

    /// `p`'s holding of `lock` began at `at` (time, `acquire ok` index); `others_asking`:
    /// another process wanted the lock then.
    pub fn opened(&mut self, lock: u32, p: u64, at: (u64, u64), others_asking: bool) {
        let threshold = self.threshold_ns;
        let runs = self.locks.entry(lock).or_default();
        if let Some(mut cur) = runs.current.take() {
            let same = cur.stretch.process == p;
            let reentry =
                cur.open || matches!(cur.stretch.end, Some((_, _, EndReason::Reacquired)));
            let held_over = cur.stretch.held_over && at.0.saturating_sub(cur.last_end) < threshold;
            if same && (reentry || held_over) {
                cur.stretch.grant(at);
                cur.holding = at.1;
                cur.open = true;
                runs.current = Some(cur);
                return;
            }
            if cur.open {
                runs.cut.push(Cut {
                    stretch: cur.stretch,
                    holding: cur.holding,
                    cut: at.0,
                });
            } else {
                runs.finalize(cur.stretch, cur.last_end.min(at.0), threshold);
            }
        }
        let mut stretch = Stretch::new(p, at.0, others_asking);
        stretch.grant(at);
        runs.current = Some(Current {
            stretch,
            holding: at.1,
            open: true,
            last_end: at.0,
        });
    }

    /// `p`'s holding of `lock` begun at `acquire_index` ended: held until `held_until`, and
    /// ended at `end` for its reason; `kept`: a release of it had failed.
    pub fn closed(
        &mut self,
        lock: u32,
        p: u64,
        acquire_index: u64,
        held_until: u64,
        end: (u64, u64, EndReason),
        kept: bool,
    ) {
        let threshold = self.threshold_ns;
        let Some(runs) = self.locks.get_mut(&lock) else {
            return;
        };
        if let Some(cur) = runs
            .current
            .as_mut()
            .filter(|c| c.stretch.process == p && c.holding == acquire_index)
        {
            cur.open = false;
            cur.last_end = held_until;
            cur.stretch.end = Some(end);
            cur.stretch.held_over |= kept;
            return;
        }
        if let Some(i) = runs
            .cut
            .iter()
            .position(|c| c.stretch.process == p && c.holding == acquire_index)
        {
            let mut c = runs.cut.swap_remove(i);
            c.stretch.end = Some(end);
            runs.finalize(c.stretch, held_until.min(c.cut), threshold);
        }
    }

    /// `p` invoked an acquire of `lock`.
    pub fn asked(&mut self, lock: u32, p: u64) {
        if let Some(cur) = self.locks.get_mut(&lock).and_then(|r| r.current.as_mut()) {
            if cur.stretch.process != p {
                cur.stretch.asked = true;
            }
        }
    }

    /// `p` wanted `lock` from `s` to `e`: the interval goes to every stretch it touches.
    pub fn wanting(&mut self, lock: u32, p: u64, s: u64, e: u64) {
        let Some(runs) = self.locks.get_mut(&lock) else {
            return;
        };
        if let Some(cur) = &mut runs.current {
            cur.stretch.add_wanting(p, s, e);
        }
        for c in &mut runs.cut {
            c.stretch.add_wanting(p, s, e.min(c.cut));
        }
        for st in runs.long.iter_mut().rev() {
            if st.to < s {
                break;
            }
            st.add_wanting(p, s, e);
        }
    }

    /// An acquire of `lock` by `p` failed at `at`.
    pub fn failed(&mut self, lock: u32, p: u64, at: (u64, u64)) {
        let Some(runs) = self.locks.get_mut(&lock) else {
            return;
        };
        let fail = (at.0, at.1, p);
        let mut stretches: Vec<&mut Stretch> = Vec::new();
        if let Some(cur) = &mut runs.current {
            stretches.push(&mut cur.stretch);
        }
        for c in runs.cut.iter_mut().filter(|c| at.0 <= c.cut) {
            stretches.push(&mut c.stretch);
        }
        for st in runs.long.iter_mut().rev() {
            if st.to < at.0 {
                break;
            }
            stretches.push(st);
        }
        for st in stretches {
            if st.process != p && (st.from..=st.to).contains(&at.0) {
                st.fails.push(fail);
            }
        }
    }

    /// The history ended (every holding has closed). Returns every lock's long stretches.
    pub fn finish(self) -> HashMap<u32, Vec<Stretch>> {
        let threshold = self.threshold_ns;
        self.locks
            .into_iter()
            .map(|(lock, mut runs)| {
                // A holding left open cannot be: the history's end closed them all.
                for c in std::mem::take(&mut runs.cut) {
                    runs.finalize(c.stretch, c.cut, threshold);
                }
                if let Some(cur) = runs.current.take() {
                    runs.finalize(cur.stretch, cur.last_end, threshold);
                }
                (lock, runs.long)
            })
            .collect()
    }
}

/// The lockouts of `st`: the pieces of it that other processes' wanting covers, minus the
/// merged `faulty` stretches, at least `threshold` long.
pub(crate) fn pieces(st: &Stretch, faulty: &[(u64, u64)], threshold: u64) -> Vec<(u64, u64)> {
    let mut wanting: Vec<(u64, u64)> = st.wanting.iter().map(|w| (w.0, w.1)).collect();
    let mut out = Vec::new();
    for (s, e) in super::merge(&mut wanting) {
        for (a, b) in super::subtract(s, e, faulty) {
            if b - a >= threshold {
                out.push((a, b));
            }
        }
    }
    out
}
