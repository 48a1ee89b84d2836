//! Lockouts and failed releases on hand-built histories: one process alone granted or holding
//! a lock while others ask is STUCK (a lockout), and a release that failed does not end a
//! holding, without making double holders of it.

use lockpick_checker::history::{Event, EventKind, Process, Value, F, FORMAT_VERSION};
use lockpick_checker::lock::{check_locks, FindingKind, LockCheckParams, LockReport, Property};
use lockpick_checker::verdict::Verdict;

const MS: u64 = 1_000_000;

/// Operations on lock "l", given in any order; `build` orders them by time (ties keep
/// insertion order) and numbers them. Times in milliseconds.
#[derive(Default)]
struct H {
    events: Vec<Event>,
}

impl H {
    fn push(&mut self, ms: u64, p: Process, kind: EventKind, f: F, value: Value) -> &mut H {
        let client = matches!(p, Process::Client(_));
        let error = match kind {
            EventKind::Fail if f == F::Release => Some("not-owner".to_string()),
            EventKind::Fail => Some("timeout-waiting".to_string()),
            EventKind::Info => Some("timeout".to_string()),
            _ => None,
        };
        self.events.push(Event {
            v: FORMAT_VERSION,
            index: 0,
            time_ns: ms * MS,
            process: p,
            kind,
            f,
            lock: client.then(|| "l".to_string()),
            value,
            error,
        });
        self
    }

    fn op(&mut self, p: u64, f: F, at: (u64, u64), kind: EventKind, result: Value) -> &mut H {
        self.push(
            at.0,
            Process::Client(p),
            EventKind::Invoke,
            f,
            Value::default(),
        );
        self.push(at.1, Process::Client(p), kind, f, result)
    }

    fn acquire(&mut self, p: u64, at: (u64, u64)) -> &mut H {
        self.op(p, F::Acquire, at, EventKind::Ok, Value::default())
    }

    fn acquire_leased(&mut self, p: u64, at: (u64, u64), lease_ms: u64) -> &mut H {
        let granted = Value {
            lease_ms: Some(lease_ms),
            ..Value::default()
        };
        self.op(p, F::Acquire, at, EventKind::Ok, granted)
    }

    fn release(&mut self, p: u64, at: (u64, u64), kind: EventKind) -> &mut H {
        self.op(p, F::Release, at, kind, Value::default())
    }

    /// Process `p` asks every `every` ms from `from` to `to`, each acquire timing out just
    /// before the next.
    fn asking(&mut self, p: u64, from: u64, to: u64, every: u64) -> &mut H {
        let mut t = from;
        while t + every <= to {
            self.op(
                p,
                F::Acquire,
                (t, t + every - 1),
                EventKind::Fail,
                Value::default(),
            );
            t += every;
        }
        self
    }

    fn nemesis(&mut self, ms: u64, f: F, client: u64) -> &mut H {
        let value = Value {
            client: Some(client),
            ..Value::default()
        };
        self.push(ms, Process::Nemesis, EventKind::Info, f, value)
    }

    fn build(&self) -> Vec<Event> {
        let mut events = self.events.clone();
        events.sort_by_key(|e| e.time_ns);
        for (i, e) in events.iter_mut().enumerate() {
            e.index = i as u64;
        }
        events
    }
}

/// The check with a 3 s threshold, as scenarios have by default.
fn check(events: &[Event]) -> LockReport {
    check_locks(
        events,
        &LockCheckParams {
            property: Property::Exclusive,
            deadlock_ms: 3_000,
        },
    )
}

fn kinds(r: &LockReport) -> Vec<FindingKind> {
    r.violations.iter().map(|f| f.kind).collect()
}

/// Redisson's MultiLock after a node crash: process 3's release fails at 300 ms and it keeps
/// the lock; it gets it back by re-entry at 5 s and at 8 s (releasing in between), while
/// processes 0 and 1 ask every 2 s to the end at 10 s and nobody else is granted.
fn reentry_after_failed_release() -> H {
    let mut h = H::default();
    h.acquire(3, (0, 10))
        .release(3, (300, 310), EventKind::Fail)
        .acquire(3, (5_000, 5_010))
        .release(3, (5_200, 5_210), EventKind::Ok)
        .acquire(3, (5_300, 5_310))
        .release(3, (5_500, 5_510), EventKind::Fail)
        .acquire(3, (8_000, 8_010))
        .asking(0, 100, 10_100, 2_000)
        .asking(1, 150, 10_150, 2_000);
    h
}

#[test]
fn a_holder_that_re_enters_after_a_failed_release_locks_the_others_out() {
    let events = reentry_after_failed_release().build();
    let r = check(&events);
    assert_eq!(r.verdict, Verdict::Stuck, "{r}");
    // The lock was never free: a lockout, not a deadlock, and never two holders.
    assert_eq!(kinds(&r), vec![FindingKind::Lockout], "{r}");
    assert_eq!(r.stats.max_concurrent_holders, 1, "{r}");
    let f = &r.violations[0];
    let w = f.window.expect("a window");
    // From when the others asked to the end of the history (process 3 still holds).
    assert_eq!((w.start_ns, w.end_ns), (100 * MS, 10_149 * MS), "{r}");
    assert_eq!(f.processes, vec![3, 0, 1]);
    // Its grants at 5.010 and 5.310 and 8.010 s lie inside (the first, at 10 ms, before).
    assert_eq!(f.count, Some(3), "{r}");
    assert!(
        f.summary.starts_with(
            "only process 3 was granted or held lock \"l\" for 10.049 s from 0.100 s to 10.149 s while process(es) 0, 1 asked (3 grant(s) to process 3, 10 failed acquire(s) by the others)"
        ),
        "{}",
        f.summary
    );
    let (lines, _) = r.violation_lines(3);
    assert!(lines[0].starts_with("STUCK lockout: "), "{lines:?}");
    assert_eq!(r.per_lock[0].lockouts, 1);
    assert_eq!(r.per_lock[0].deadlocks, 0);
}

#[test]
fn late_grants_of_a_holder_whose_release_failed_do_not_break_its_lockout() {
    // Redisson's MultiLock after a node crash (3.27.2, seed 8 of the known-bug pair): process
    // 3's release fails and it keeps the lock at the server; each of its later grants comes
    // back 1.7-2.7 s after it asked, past the 1 s lease counted from the request. Counted so,
    // each of those holdings would end at its grant and the gaps between them would pass the
    // threshold; the lock was not free in them: the lease runs from the grant's reply.
    let mut h = H::default();
    h.acquire_leased(3, (0, 10), 1_000)
        .release(3, (300, 310), EventKind::Fail)
        .acquire_leased(3, (320, 330), 1_000)
        .release(3, (500, 510), EventKind::Ok)
        .acquire_leased(3, (600, 2_400), 1_000)
        .release(3, (2_700, 2_710), EventKind::Ok)
        .acquire_leased(3, (2_800, 5_500), 1_000)
        .release(3, (5_800, 5_810), EventKind::Ok)
        .acquire_leased(3, (5_900, 7_600), 1_000)
        .release(3, (7_900, 7_910), EventKind::Ok)
        .asking(0, 100, 10_100, 2_000)
        .asking(1, 150, 10_150, 2_000);
    let r = check(&h.build());
    assert_eq!(r.verdict, Verdict::Stuck, "{r}");
    assert_eq!(kinds(&r), vec![FindingKind::Lockout], "{r}");
    let f = &r.violations[0];
    let w = f.window.expect("a window");
    // From when the others asked to process 3's last release.
    assert_eq!((w.start_ns, w.end_ns), (100 * MS, 7_900 * MS), "{r}");
    assert_eq!(f.processes, vec![3, 0, 1]);
    assert_eq!(
        f.count,
        Some(4),
        "the grants at 0.33, 2.4, 5.5 and 7.6 s: {r}"
    );
}

#[test]
fn a_renewing_holder_that_never_releases_locks_the_others_out() {
    // Process 0 takes a 1 s lease and renews it every 500 ms to the end; processes 1 and 2
    // time out every 2 s. Before lockouts this was a deadlock, though the lock was never free.
    let mut h = H::default();
    h.acquire_leased(0, (0, 10), 1_000)
        .asking(1, 100, 10_100, 2_000)
        .asking(2, 200, 10_200, 2_000);
    for i in 1..20 {
        let t = i * 500;
        h.op(0, F::Renew, (t, t + 5), EventKind::Ok, Value::default());
    }
    let r = check(&h.build());
    assert_eq!(r.verdict, Verdict::Stuck, "{r}");
    assert_eq!(kinds(&r), vec![FindingKind::Lockout], "{r}");
    let f = &r.violations[0];
    assert_eq!(f.processes, vec![0, 1, 2]);
    assert_eq!(f.count, Some(0), "granted before the others asked: {r}");
    assert!(
        f.summary.contains("process 0 still held it"),
        "{}",
        f.summary
    );
}

#[test]
fn no_lockout_when_another_process_is_granted_in_between() {
    // Process 3 holds from 10 ms to 5 s (its first release fails, it releases at 2 s and is
    // back at 2.81 s) while process 0 asks: alone, a lockout. With process 1 granted at 2.6 s,
    // the stretches of process 3 on either side are shorter than 3 s: none.
    let history = |other: bool| {
        let mut h = H::default();
        h.acquire(3, (0, 10))
            .release(3, (300, 310), EventKind::Fail)
            .release(3, (2_000, 2_010), EventKind::Ok)
            .acquire(3, (2_800, 2_810))
            .release(3, (5_000, 5_010), EventKind::Ok)
            .asking(0, 100, 5_100, 1_000);
        if other {
            h.acquire(1, (2_500, 2_600))
                .release(1, (2_700, 2_710), EventKind::Ok);
        }
        h.build()
    };
    let r = check(&history(false));
    assert_eq!(kinds(&r), vec![FindingKind::Lockout], "{r}");
    let r = check(&history(true));
    assert_eq!(r.verdict, Verdict::Valid, "{r}");
}

#[test]
fn no_lockout_when_the_holder_released_and_won_the_lock_again() {
    // A polling lock on one Redis: process 2 holds 1.2 s, releases (ok), and asks again at
    // once, winning four times in a row while processes 0 and 1, polling, time out every
    // 1.5 s, until process 0 wins at 4.87 s. The lock was free in every gap; who gets a free lock is the lock's choice (it need
    // not be fair): no lockout. Had one of those releases failed, the lock might have stayed
    // process 2's through the gaps, and the same history is a lockout.
    let history = |second: EventKind| {
        let mut h = H::default();
        h.acquire(2, (0, 10))
            .release(2, (1_210, 1_215), EventKind::Ok)
            .acquire(2, (1_220, 1_225))
            .release(2, (2_425, 2_430), second)
            .acquire(2, (2_435, 2_440))
            .release(2, (3_640, 3_645), EventKind::Ok)
            .acquire(2, (3_650, 3_655))
            .release(2, (4_855, 4_860), EventKind::Ok)
            .asking(0, 100, 4_600, 1_500)
            .asking(1, 150, 4_650, 1_500)
            .acquire(0, (4_860, 4_870))
            .release(0, (5_000, 5_010), EventKind::Ok);
        h.build()
    };
    let r = check(&history(EventKind::Ok));
    assert_eq!(r.verdict, Verdict::Valid, "{r}");
    assert!(r.violations.is_empty(), "{r}");
    let r = check(&history(EventKind::Fail));
    assert_eq!(kinds(&r), vec![FindingKind::Lockout], "{r}");
}

#[test]
fn no_lockout_when_the_others_do_not_ask() {
    // Process 3 alone, granted again and again for 10 s; process 0 only reads.
    let mut h = H::default();
    for i in 0..20 {
        let t = i * 500;
        h.acquire(3, (t, t + 10))
            .release(3, (t + 300, t + 310), EventKind::Ok);
    }
    h.op(0, F::Read, (100, 200), EventKind::Ok, Value::default());
    let r = check(&h.build());
    assert_eq!(r.verdict, Verdict::Valid, "{r}");
}

#[test]
fn no_lockout_shorter_than_the_threshold() {
    // The others ask for 2.5 s of process 3's hold, then get the lock in turn.
    let mut h = H::default();
    h.acquire(3, (0, 10))
        .release(3, (300, 310), EventKind::Fail)
        .release(3, (2_600, 2_610), EventKind::Ok)
        .asking(0, 100, 2_600, 500)
        .acquire(0, (2_600, 2_620))
        .release(0, (2_700, 2_710), EventKind::Ok);
    let r = check(&h.build());
    assert_eq!(r.verdict, Verdict::Valid, "{r}");
}

#[test]
fn no_lockout_while_the_holder_is_paused() {
    // A pause is a fault: the others waiting for a paused holder are not locked out.
    let mut h = H::default();
    h.acquire(3, (0, 10))
        .nemesis(20, F::Pause, 3)
        .nemesis(9_000, F::Resume, 3)
        .release(3, (9_100, 9_110), EventKind::Ok)
        .asking(0, 100, 9_100, 1_000);
    let r = check(&h.build());
    assert_eq!(r.verdict, Verdict::Valid, "{r}");
}

#[test]
fn a_failed_release_does_not_end_the_holding() {
    // Process 0's release fails at 300 ms: it still holds the lock, so process 1's 9 s of
    // asking are a lockout by process 0, not a deadlock of a free lock. Had the release
    // succeeded, it would be a deadlock.
    let history = |kind: EventKind| {
        H::default()
            .acquire(0, (0, 10))
            .release(0, (300, 310), kind)
            .asking(1, 400, 10_400, 1_000)
            .build()
    };
    let r = check(&history(EventKind::Fail));
    assert_eq!(kinds(&r), vec![FindingKind::Lockout], "{r}");
    assert_eq!(r.verdict, Verdict::Stuck, "{r}");
    let r = check(&history(EventKind::Ok));
    assert_eq!(kinds(&r), vec![FindingKind::Deadlock], "{r}");
    assert_eq!(r.verdict, Verdict::Stuck, "{r}");
}

#[test]
fn a_kept_holding_ends_at_the_next_grant_to_another_process() {
    // Process 0's release fails at 300 ms; process 1 is granted at 1 s: the server held the
    // lock free, so process 0's key was gone. No double holder, and process 0 taking the
    // lock again later is no double holder with itself either.
    let r = check(
        &H::default()
            .acquire(0, (0, 10))
            .release(0, (300, 310), EventKind::Fail)
            .acquire(1, (900, 1_000))
            .release(1, (1_200, 1_210), EventKind::Ok)
            .acquire(0, (1_300, 1_310))
            .release(0, (1_400, 1_410), EventKind::Fail)
            .acquire(0, (1_500, 1_510))
            .release(0, (1_600, 1_610), EventKind::Ok)
            .build(),
    );
    assert_eq!(r.verdict, Verdict::Valid, "{r}");
    assert_eq!(r.stats.max_concurrent_holders, 1, "{r}");
}

#[test]
fn a_release_that_fails_after_another_grant_ends_at_its_invocation() {
    // Process 1 was granted at 100 ms while process 0 believed it held the lock (a double
    // holder, until process 0 invoked release at 300 ms); the release fails not-owner: the
    // key was gone, so process 2's grant at 500 ms overlaps nobody.
    let r = check(
        &H::default()
            .acquire(0, (0, 10))
            .acquire(1, (50, 100))
            .release(1, (200, 210), EventKind::Ok)
            .release(0, (300, 310), EventKind::Fail)
            .acquire(2, (400, 500))
            .release(2, (600, 610), EventKind::Ok)
            .build(),
    );
    assert_eq!(kinds(&r), vec![FindingKind::DoubleHolder], "{r}");
    let w = r.violations[0].window.expect("a window");
    assert_eq!((w.start_ns, w.end_ns), (100 * MS, 200 * MS), "{r}");
}

#[test]
fn a_kept_holding_ends_when_its_lease_runs_out() {
    // Process 0's 1 s lease is not renewed after its release fails: the lock is free from
    // 1 s (counted from the acquire's invocation), and process 1's asking after it is a
    // deadlock, not a lockout. With a 200 ms lease, gone before the release was invoked, the
    // holding ends at that invocation (300 ms), as a release's always did.
    let history = |lease_ms: u64| {
        H::default()
            .acquire_leased(0, (0, 10), lease_ms)
            .release(0, (300, 310), EventKind::Fail)
            .asking(1, 400, 10_400, 1_000)
            .build()
    };
    let r = check(&history(1_000));
    assert_eq!(kinds(&r), vec![FindingKind::Deadlock], "{r}");
    let w = r.violations[0].window.expect("a window");
    assert_eq!((w.start_ns, w.end_ns), (1_000 * MS, 10_399 * MS), "{r}");
    assert!(
        r.violations[0]
            .summary
            .contains("let its lease run out at 1.000 s"),
        "{r}"
    );
    let r = check(&history(200));
    assert_eq!(kinds(&r), vec![FindingKind::Deadlock], "{r}");
    let w = r.violations[0].window.expect("a window");
    assert_eq!((w.start_ns, w.end_ns), (400 * MS, 10_399 * MS), "{r}");
    assert!(
        r.violations[0]
            .summary
            .contains("invoked release at 0.300 s"),
        "{r}"
    );
}
