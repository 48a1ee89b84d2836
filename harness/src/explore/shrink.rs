//! Shrinking a schedule that broke the lock: the reductions to try, as data, and the rule for
//! when a re-measured candidate still reproduces. Pure: the search runs the candidates and
//! tells the [`Shrinker`] which ones held; runs are real processes, so "holds" is a rate
//! (`k` of `n` re-runs, decided as soon as the answer is certain).
//!
//! Reductions, simplest first: drop a fault (the last one too); the workload's shape back toward the scenario's
//! own ([`super::workload::shape_candidates`]: all of it, the watchdog, holds halved, thinks);
//! fewer clients; a recurring pause once; a fault's size halved (toward the
//! smallest that still breaks the lock); a window halved; a fault moved earlier; a shorter
//! workload. Each makes the schedule strictly smaller on a well-founded measure (fewer faults,
//! fewer clients, or smaller numbers bounded below), so shrinking ends.

use super::draw::{drawing, Drawn, DrawnExt, Schedule};
use super::workload::{shape_candidates, Workload};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// The smallest a size is halved to, in milliseconds.
pub const MIN_SIZE_MS: u64 = 10;

/// The fewest clients a schedule is shrunk to: one client cannot hold a lock twice.
pub const MIN_CLIENTS: usize = 2;

/// A reduction of a schedule: what changed, and the schedule it makes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// For people: `dropped latency 312 ms on n1 at 1.200 s`.
    pub change: String,
    pub schedule: Schedule,
}

pub use lockpick_store::explore::Need;

fn halved(v: u64, floor: u64) -> Option<u64> {
    (v / 2 >= floor && v / 2 < v).then_some(v / 2)
}

/// The fault as it is after `f` changed it, if that is a change.
fn with(d: &Drawn, f: impl FnOnce(&mut Drawn)) -> Drawn {
    let mut d = d.clone();
    f(&mut d);
    d
}

/// Every reduction of `s`, simplest first. `lease_ms` bounds how short the workload gets;
/// `base` is the scenario's own shape, which a drawn shape shrinks toward.
pub fn candidates(s: &Schedule, lease_ms: u64, base: &Workload) -> Vec<Candidate> {
    let mut out = Vec::new();
    let mut push = |change: String, schedule: Schedule| out.push(Candidate { change, schedule });
    // The last fault too: a lock whose check and set are two commands breaks with none, and a
    // schedule that keeps a fault it does not need points the user at the wrong cause.
    for (i, d) in s.faults.iter().enumerate() {
        let mut t = s.clone();
        t.faults.remove(i);
        let left = if t.faults.is_empty() {
            " (no fault left)"
        } else {
            ""
        };
        push(format!("dropped {}{left}", d.describe()), t);
    }
    if let Some(w) = &s.workload {
        for (change, nw) in shape_candidates(w, base) {
            let mut t = s.clone();
            t.workload = Some(nw);
            push(change, t);
        }
    }
    let aimed = s.faults.iter().filter_map(|d| d.client).max();
    let mut fewer = vec![
        (s.clients / 2).max(MIN_CLIENTS),
        s.clients.saturating_sub(1),
    ];
    fewer.dedup();
    for c in fewer {
        if c >= MIN_CLIENTS && c < s.clients && aimed.is_none_or(|a| a < c) {
            let mut t = s.clone();
            t.clients = c;
            push(format!("{} clients instead of {}", c, s.clients), t);
        }
    }
    for (i, d) in s.faults.iter().enumerate() {
        let sized = drawing(&d.fault).is_some_and(|w| w.size.is_some());
        let mut change = |what: String, nd: Drawn| {
            let mut t = s.clone();
            t.faults[i] = nd;
            push(format!("{what} of {}", d.describe()), t);
        };
        if let Some(v) = halved(d.size_ms, MIN_SIZE_MS).filter(|_| sized) {
            change(
                format!("size {} ms → {v} ms", d.size_ms),
                with(d, |n| n.size_ms = v),
            );
        }
        if let Some(w) = d.window_ms {
            if let Some(v) = halved(w, d.size_ms.max(MIN_SIZE_MS)) {
                change(
                    format!("window {w} ms → {v} ms"),
                    with(d, |n| n.window_ms = Some(v)),
                );
            }
        }
        if let Some(every) = d.every_ms {
            change(
                format!("once instead of every {every} ms"),
                with(d, |n| n.every_ms = None),
            );
        }
        if let Some(v) = halved(d.at_ms, 100) {
            change(
                format!("start {} ms → {v} ms", d.at_ms),
                with(d, |n| n.at_ms = v),
            );
        }
    }
    // A shorter workload: every re-run after it is quicker. It must still hold every fault
    // and two leases after the last one, for the lock to be taken again.
    let needed = s.faults.iter().map(Drawn::end_ms).max().unwrap_or(0) + 2 * lease_ms;
    let shorter = (s.duration_ms / 2).max(needed).max(2 * lease_ms);
    if shorter < s.duration_ms {
        let mut t = s.clone();
        t.duration_ms = shorter;
        push(format!("workload {} ms → {shorter} ms", s.duration_ms), t);
    }
    out
}

/// A find that came back in some re-runs but too few, on a run twice as long (at most
/// `longest_ms`), when one of its faults recurs until the run ends: a race that a run wins now
/// and then gets twice the tries in one. `None` when nothing recurs or it is as long already.
pub fn lengthened(s: &Schedule, longest_ms: u64) -> Option<Candidate> {
    let longer = (s.duration_ms * 2).min(longest_ms);
    if longer <= s.duration_ms || s.faults.iter().all(|d| d.every_ms.is_none()) {
        return None;
    }
    let mut t = s.clone();
    t.duration_ms = longer;
    Some(Candidate {
        change: format!("workload {} ms → {longer} ms", s.duration_ms),
        schedule: t,
    })
}

/// Greedy shrinking, one candidate at a time: the first candidate that still reproduces
/// becomes the schedule and the reductions start again from it; the others are dropped.
#[derive(Debug)]
pub struct Shrinker {
    current: Schedule,
    pending: VecDeque<Candidate>,
    lease_ms: u64,
    base: Workload,
    /// Each accepted change, with the schedule it replaced, so a change accepted on a lucky
    /// few re-runs can be undone when the confirming runs say otherwise.
    accepted: Vec<(String, Schedule)>,
}

impl Shrinker {
    pub fn new(start: Schedule, lease_ms: u64, base: Workload) -> Shrinker {
        let pending = candidates(&start, lease_ms, &base).into();
        Shrinker {
            current: start,
            pending,
            lease_ms,
            base,
            accepted: Vec::new(),
        }
    }

    /// The smallest schedule known to reproduce.
    pub fn current(&self) -> &Schedule {
        &self.current
    }

    /// The next reduction to measure; `None` when none is left: the schedule is minimal
    /// under these reductions.
    pub fn next_candidate(&mut self) -> Option<Candidate> {
        self.pending.pop_front()
    }

    /// `c` reproduced: it becomes the schedule.
    pub fn accept(&mut self, c: Candidate) {
        self.pending = candidates(&c.schedule, self.lease_ms, &self.base).into();
        let before = std::mem::replace(&mut self.current, c.schedule);
        self.accepted.push((c.change, before));
    }

    /// Whether a change was accepted that [`Shrinker::undo`] can take back.
    pub fn can_undo(&self) -> bool {
        !self.accepted.is_empty()
    }

    /// Takes back the last accepted change: the schedule before it is the schedule again, and
    /// shrinking is over (no candidate is left). Returns the change undone.
    pub fn undo(&mut self) -> Option<String> {
        let (change, before) = self.accepted.pop()?;
        self.current = before;
        self.pending.clear();
        Some(change)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fault(name: &str, at_ms: u64, size_ms: u64) -> Drawn {
        Drawn {
            fault: name.into(),
            at_ms,
            size_ms,
            window_ms: (name == "latency").then_some(3000),
            client: (name == "client-pause").then_some(3),
            point: (name == "client-pause").then(|| "before-release".into()),
            node: (name != "client-pause").then(|| "n1".into()),
            negative: false,
            op: None,
            every_ms: None,
        }
    }

    fn start() -> Schedule {
        Schedule {
            faults: vec![
                fault("client-pause", 2000, 2800),
                fault("latency", 1200, 700),
                fault("node-pause", 400, 150),
            ],
            clients: 4,
            duration_ms: 8000,
            workload: Some(Workload {
                hold_ms: [450, 900],
                think_ms: [0, 200],
                watchdog: true,
            }),
        }
    }

    fn base() -> Workload {
        Workload {
            hold_ms: [1, 5],
            think_ms: [0, 10],
            watchdog: false,
        }
    }

    /// Shrinks with `reproduces` as the oracle, counting candidates asked.
    fn shrink(reproduces: impl Fn(&Schedule) -> bool) -> (Schedule, usize) {
        let mut s = Shrinker::new(start(), 1000, base());
        let mut asked = 0;
        while let Some(c) = s.next_candidate() {
            asked += 1;
            assert!(asked < 10_000, "shrinking does not end");
            if reproduces(&c.schedule) {
                s.accept(c);
            }
        }
        (s.current().clone(), asked)
    }

    #[test]
    fn only_a_schedule_with_a_recurring_fault_is_lengthened_and_never_past_the_longest() {
        let mut s = start();
        assert_eq!(
            lengthened(&s, 20_000),
            None,
            "nothing recurs: no more tries"
        );
        s.faults[0].every_ms = Some(900);
        let c = lengthened(&s, 20_000).expect("the client pause recurs");
        assert_eq!(c.schedule.duration_ms, 16_000);
        assert_eq!(c.schedule.faults, s.faults);
        assert_eq!(lengthened(&s, 10_000).unwrap().schedule.duration_ms, 10_000);
        assert_eq!(lengthened(&s, 8000), None, "as long as it may be already");
    }

    #[test]
    fn undo_takes_back_accepted_changes_last_first_and_ends_shrinking() {
        let mut s = Shrinker::new(start(), 1000, base());
        assert!(!s.can_undo());
        let first = s.next_candidate().unwrap();
        s.accept(first.clone());
        let second = s.next_candidate().unwrap();
        s.accept(second.clone());
        assert_eq!(s.current(), &second.schedule);
        assert_eq!(s.undo(), Some(second.change));
        assert_eq!(s.current(), &first.schedule);
        assert!(
            s.next_candidate().is_none(),
            "shrinking goes on after an undo"
        );
        assert_eq!(s.undo(), Some(first.change));
        assert_eq!(s.current(), &start());
        assert!(!s.can_undo());
        assert_eq!(s.undo(), None);
        assert_eq!(s.current(), &start());
    }

    #[test]
    fn it_keeps_only_the_fault_that_matters_at_the_smallest_size_that_still_breaks() {
        // The lock breaks when any latency of at least 300 ms runs for 1 s or more.
        let (s, _) = shrink(|s| {
            s.faults
                .iter()
                .any(|d| d.fault == "latency" && d.size_ms >= 300 && d.window_ms.unwrap() >= 1000)
        });
        assert_eq!(s.faults.len(), 1, "{s:?}");
        let d = &s.faults[0];
        assert_eq!(d.fault, "latency");
        // Halving from 700: 350 breaks, 175 does not.
        assert_eq!(d.size_ms, 350);
        assert_eq!(d.window_ms, Some(1500));
        assert!(d.at_ms < 200, "{d:?}");
        assert_eq!(s.clients, 2);
        assert!(s.duration_ms < 8000 && s.duration_ms >= d.end_ms() + 2000);
    }

    #[test]
    fn a_recurring_pause_is_tried_once_and_stays_recurring_when_once_does_not_break() {
        let mut first = start();
        first.faults[0].every_ms = Some(700);
        let recurring = |s: &Schedule| s.faults.iter().any(|d| d.every_ms.is_some());
        let mut sh = Shrinker::new(first.clone(), 1000, base());
        let mut asked_once = false;
        while let Some(c) = sh.next_candidate() {
            asked_once |= c.change.starts_with("once instead of every 700 ms");
            if recurring(&c.schedule) {
                sh.accept(c);
            }
        }
        assert!(asked_once);
        assert_eq!(sh.current().faults.len(), 1);
        assert_eq!(sh.current().faults[0].every_ms, Some(700));
        let mut sh = Shrinker::new(first, 1000, base());
        while let Some(c) = sh.next_candidate() {
            if c.schedule.faults.iter().any(|d| d.fault == "client-pause") {
                sh.accept(c);
            }
        }
        assert_eq!(sh.current().faults[0].every_ms, None, "once is simpler");
    }

    #[test]
    fn a_client_fault_keeps_the_clients_it_aims_at() {
        let (s, _) = shrink(|s| s.faults.iter().any(|d| d.fault == "client-pause"));
        assert_eq!(s.faults.len(), 1);
        assert_eq!(s.clients, 4, "the pause is aimed at client 3");
        assert!(s.faults[0].size_ms >= MIN_SIZE_MS);
    }

    #[test]
    fn when_nothing_smaller_reproduces_the_schedule_stays_and_every_reduction_was_asked() {
        let (s, asked) = shrink(|_| false);
        assert_eq!(s, start());
        assert_eq!(asked, candidates(&start(), 1000, &base()).len());
    }

    #[test]
    fn a_bug_that_needs_long_holds_and_a_watchdog_keeps_them_and_loses_the_rest() {
        // The lock breaks when a holder renews (watchdog on) and holds at least 400 ms, with
        // a client paused: as the unchecked-renew toy does.
        let (s, _) = shrink(|s| {
            let w = s.workload.as_ref().unwrap();
            w.watchdog && w.hold_ms[1] >= 400 && s.faults.iter().any(|d| d.fault == "client-pause")
        });
        let w = s.workload.as_ref().unwrap();
        assert_eq!(s.faults.len(), 1, "{s:?}");
        assert!(w.watchdog);
        assert_eq!(
            w.hold_ms,
            [225, 450],
            "halved once: 450 still breaks, 225 does not"
        );
        assert_eq!(
            w.think_ms,
            [0, 10],
            "the think time went back to the scenario's"
        );
    }

    #[test]
    fn a_bug_that_needs_no_fault_loses_every_fault() {
        // The lock breaks with two clients and nothing else: a check and a set that are two
        // commands.
        let (s, _) = shrink(|_| true);
        assert!(s.faults.is_empty(), "{s:?}");
        assert_eq!(s.clients, 2);
        assert_eq!(s.workload, Some(base()));
        assert_eq!(s.duration_ms, 2000, "two leases: the shortest workload");
        let c = &candidates(&start(), 1000, &base())[..3];
        assert!(c.iter().all(|c| c.change.starts_with("dropped ")), "{c:?}");
        let one = Schedule {
            faults: vec![fault("latency", 1200, 700)],
            ..start()
        };
        let first = &candidates(&one, 1000, &base())[0];
        assert!(first.schedule.faults.is_empty());
        assert!(
            first.change.ends_with("(no fault left)"),
            "{}",
            first.change
        );
    }

    #[test]
    fn a_bug_that_needs_no_shape_goes_back_to_the_scenarios_own() {
        let (s, _) = shrink(|s| s.faults.iter().any(|d| d.fault == "latency"));
        assert_eq!(s.workload, Some(base()));
        assert_eq!(s.clients, 2);
    }
}
