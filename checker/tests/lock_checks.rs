//! Lock checker behaviour on hand-built histories: one test per rule of the checker.

use lockpick_checker::faults::fault_windows;
use lockpick_checker::history::{Event, EventKind, Process, Value, F, FORMAT_VERSION};
use lockpick_checker::lock::{
    check_locks, FindingKind, LockCheckParams, LockReport, Property, MAX_LISTED, PRINTED_PER_KIND,
};
use lockpick_checker::verdict::Verdict;

/// Builds histories from operations given in any order; `build` orders events by time (ties
/// keep insertion order) and numbers them. Times are in milliseconds, on lock "l".
#[derive(Default)]
struct H {
    events: Vec<Event>,
}

const MS: u64 = 1_000_000;

impl H {
    fn new() -> H {
        H::default()
    }

    fn push(
        &mut self,
        ms: u64,
        p: Process,
        kind: EventKind,
        f: F,
        value: Value,
        error: Option<&str>,
    ) -> &mut H {
        let lock = match p {
            Process::Client(_) if matches!(f, F::Acquire | F::Release | F::Renew | F::Write) => {
                Some("l".to_string())
            }
            _ => None,
        };
        self.events.push(Event {
            v: FORMAT_VERSION,
            index: 0,
            time_ns: ms * MS,
            process: p,
            kind,
            f,
            lock,
            value,
            error: error.map(str::to_string),
        });
        self
    }

    fn op(
        &mut self,
        p: u64,
        f: F,
        at: (u64, u64),
        kind: EventKind,
        args: Value,
        result: Value,
    ) -> &mut H {
        self.push(at.0, Process::Client(p), EventKind::Invoke, f, args, None);
        let error = match kind {
            EventKind::Fail => Some(match f {
                F::Renew => "lost",
                F::Release => "not-owner",
                F::Write => "stale-token",
                _ => "timeout-waiting",
            }),
            EventKind::Info => Some("timeout"),
            _ => None,
        };
        self.push(at.1, Process::Client(p), kind, f, result, error)
    }

    fn acquire(&mut self, p: u64, at: (u64, u64), token: u64) -> &mut H {
        let result = Value {
            token: Some(token),
            holder: Some(format!("h{p}")),
            ..Value::default()
        };
        self.op(p, F::Acquire, at, EventKind::Ok, Value::default(), result)
    }

    fn acquire_fail(&mut self, p: u64, at: (u64, u64)) -> &mut H {
        self.op(
            p,
            F::Acquire,
            at,
            EventKind::Fail,
            Value::default(),
            Value::default(),
        )
    }

    fn release(&mut self, p: u64, at: (u64, u64)) -> &mut H {
        self.op(
            p,
            F::Release,
            at,
            EventKind::Ok,
            Value::default(),
            Value::default(),
        )
    }

    fn write(
        &mut self,
        p: u64,
        at: (u64, u64),
        kind: EventKind,
        token: u64,
        max: Option<u64>,
    ) -> &mut H {
        let args = Value {
            token: Some(token),
            ..Value::default()
        };
        let result = Value {
            token: Some(token),
            max_token: max,
            ..Value::default()
        };
        self.op(p, F::Write, at, kind, args, result)
    }

    /// Counter increment: read `n`, then write `n + 1` with `token`.
    fn increment(&mut self, p: u64, at: u64, n: i64, kind: EventKind) -> &mut H {
        let read = Value {
            int: Some(n),
            ..Value::default()
        };
        self.op(
            p,
            F::Read,
            (at, at + 1),
            EventKind::Ok,
            Value::default(),
            read,
        );
        let args = Value {
            int: Some(n + 1),
            token: Some(1),
            ..Value::default()
        };
        self.op(p, F::Write, (at + 2, at + 3), kind, args, Value::default())
    }

    fn final_read(&mut self, p: u64, at: u64, n: i64) -> &mut H {
        let note = Value {
            note: Some("final".into()),
            ..Value::default()
        };
        let result = Value {
            int: Some(n),
            note: Some("final".into()),
            ..Value::default()
        };
        self.op(p, F::Read, (at, at + 1), EventKind::Ok, note, result)
    }

    fn nemesis(&mut self, ms: u64, f: F, nodes: &[&str], client: Option<u64>) -> &mut H {
        let value = Value {
            nodes: nodes.iter().map(|n| n.to_string()).collect(),
            client,
            ..Value::default()
        };
        self.push(ms, Process::Nemesis, EventKind::Info, f, value, None)
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

/// Index of the event of process `p` with this kind and f at `ms`.
fn index_of(events: &[Event], p: u64, kind: EventKind, f: F, ms: u64) -> u64 {
    events
        .iter()
        .find(|e| {
            e.process == Process::Client(p) && e.kind == kind && e.f == f && e.time_ns == ms * MS
        })
        .unwrap_or_else(|| panic!("no {kind:?} {f} of {p} at {ms} ms"))
        .index
}

fn check(events: &[Event], property: Property) -> LockReport {
    check_locks(
        events,
        &LockCheckParams {
            property,
            deadlock_ms: 5_000,
        },
    )
}

fn kinds(findings: &[lockpick_checker::lock::Finding]) -> Vec<FindingKind> {
    findings.iter().map(|f| f.kind).collect()
}

#[test]
fn clean_alternating_history_is_valid() {
    let events = H::new()
        .acquire(0, (0, 10), 1)
        .write(0, (20, 30), EventKind::Ok, 1, None)
        .release(0, (40, 50))
        .acquire(1, (5, 60), 2)
        .write(1, (70, 80), EventKind::Ok, 2, Some(1))
        .release(1, (90, 100))
        .acquire(0, (110, 120), 3)
        .write(0, (130, 140), EventKind::Ok, 3, Some(2))
        .release(0, (150, 160))
        .build();
    for property in [Property::Exclusive, Property::Fenced] {
        let r = check(&events, property);
        assert_eq!(r.verdict, Verdict::Valid, "{r}");
        assert!(
            r.violations.is_empty() && r.observations.is_empty(),
            "{r:?}"
        );
        assert_eq!(r.stats.acquires_ok, 3);
        assert_eq!(r.stats.writes_ok, 3);
        assert_eq!(r.stats.releases_ok, 3);
        assert_eq!(r.stats.max_concurrent_holders, 1);
        assert_eq!(r.stats.processes, 2);
    }
}

/// Process 0 takes the lock and is paused past its lease; process 1 takes it; process 0 wakes
/// and writes with its old token, which the fence rejects.
fn paused_holder(write_kind: EventKind) -> Vec<Event> {
    H::new()
        .acquire(0, (0, 10), 1)
        .nemesis(20, F::Pause, &[], Some(0))
        .acquire_fail(1, (100, 600))
        .acquire(1, (700, 1500), 2)
        .write(1, (1600, 1610), EventKind::Ok, 2, None)
        .nemesis(2020, F::Resume, &[], Some(0))
        .write(0, (2030, 2040), write_kind, 1, Some(2))
        .op(
            0,
            F::Release,
            (2100, 2110),
            EventKind::Fail,
            Value::default(),
            Value::default(),
        )
        .release(1, (3000, 3010))
        .build()
}

#[test]
fn pause_overlapping_two_holders_is_a_double_holder_naming_both_and_the_pause() {
    let events = paused_holder(EventKind::Fail);
    let r = check(&events, Property::Exclusive);
    assert_eq!(r.verdict, Verdict::Invalid, "{r}");
    assert_eq!(kinds(&r.violations), vec![FindingKind::DoubleHolder], "{r}");
    let d = &r.violations[0];
    assert_eq!(d.processes, vec![0, 1]);
    assert_eq!(d.tokens, vec![1, 2]);
    let w = d.window.expect("overlap window");
    assert_eq!((w.start_ns, w.end_ns), (1500 * MS, 2100 * MS));
    for (p, kind, f, ms) in [
        (0, EventKind::Ok, F::Acquire, 10),
        (1, EventKind::Ok, F::Acquire, 1500),
        (0, EventKind::Invoke, F::Release, 2100),
        (1, EventKind::Invoke, F::Release, 3000),
        (1, EventKind::Invoke, F::Write, 1600),
        (0, EventKind::Invoke, F::Write, 2030),
    ] {
        assert!(
            d.indices.contains(&index_of(&events, p, kind, f, ms)),
            "{f} {kind:?} of {p} missing: {d:?}"
        );
    }
    assert_eq!(d.faults.len(), 1, "{d:?}");
    assert_eq!((d.faults[0].f, d.faults[0].client), (F::Pause, Some(0)));
    assert!(d.summary.contains("processes 0 and 1"), "{}", d.summary);
    assert!(d.summary.contains("pause of client 0"), "{}", d.summary);
    assert_eq!(
        kinds(&r.observations),
        vec![FindingKind::RejectedStaleWrite]
    );
    assert_eq!(r.stats.max_concurrent_holders, 2);
}

#[test]
fn under_fenced_a_rejected_stale_write_and_the_double_holder_are_only_observations() {
    let events = paused_holder(EventKind::Fail);
    let r = check(&events, Property::Fenced);
    assert_eq!(r.verdict, Verdict::Valid, "{r}");
    assert!(r.violations.is_empty(), "{r}");
    let mut seen = kinds(&r.observations);
    seen.sort_by_key(|k| k.name());
    assert_eq!(
        seen,
        vec![FindingKind::DoubleHolder, FindingKind::RejectedStaleWrite]
    );
    let rejected = r
        .observations
        .iter()
        .find(|f| f.kind == FindingKind::RejectedStaleWrite)
        .unwrap();
    assert_eq!(rejected.processes, vec![0]);
    assert_eq!(rejected.tokens, vec![1, 2]);
    assert_eq!(r.stats.writes_rejected, 1);
}

#[test]
fn naive_resource_accepting_the_paused_writer_is_a_stale_write_even_under_fenced() {
    let events = paused_holder(EventKind::Ok);
    let r = check(&events, Property::Fenced);
    assert_eq!(r.verdict, Verdict::Invalid, "{r}");
    assert_eq!(kinds(&r.violations), vec![FindingKind::StaleWrite], "{r}");
    let s = &r.violations[0];
    assert_eq!(s.processes, vec![0, 1]);
    assert_eq!(s.tokens, vec![1, 2]);
    assert!(
        s.summary
            .contains("process 0 wrote with token 1 at 2.030 s"),
        "{}",
        s.summary
    );
    assert!(
        s.summary
            .contains("process 1 had written with token 2 at 1.610 s"),
        "{}",
        s.summary
    );
    assert!(
        s.summary.contains("process 0 had been paused 2.000 s"),
        "{}",
        s.summary
    );
    assert!(s
        .indices
        .contains(&index_of(&events, 0, EventKind::Ok, F::Write, 2040)));
    assert!(s
        .indices
        .contains(&index_of(&events, 1, EventKind::Ok, F::Write, 1610)));
}

#[test]
fn release_invoke_exactly_at_the_next_acquire_completion_is_not_an_overlap() {
    let events = H::new()
        .acquire(0, (0, 10), 1)
        .acquire(1, (50, 100), 2)
        .release(0, (100, 110))
        .release(1, (200, 210))
        .build();
    let r = check(&events, Property::Exclusive);
    assert_eq!(r.verdict, Verdict::Valid, "{r}");
    assert_eq!(r.stats.max_concurrent_holders, 1);

    // One millisecond later and it is one.
    let late = H::new()
        .acquire(0, (0, 10), 1)
        .acquire(1, (50, 100), 2)
        .release(0, (101, 110))
        .release(1, (200, 210))
        .build();
    assert_eq!(check(&late, Property::Exclusive).verdict, Verdict::Invalid);
}

#[test]
fn stale_write_is_found_from_max_token_when_writes_were_concurrent() {
    // Process 0's write with token 1 was invoked before process 1's write completed, so only
    // the resource's max_token proves it stale.
    let events = H::new()
        .write(1, (100, 120), EventKind::Ok, 2, None)
        .write(0, (110, 130), EventKind::Ok, 1, Some(2))
        .build();
    let r = check(&events, Property::Fenced);
    assert_eq!(kinds(&r.violations), vec![FindingKind::StaleWrite], "{r}");
    let s = &r.violations[0];
    assert_eq!(s.processes, vec![0, 1]);
    assert!(
        s.summary
            .contains("while process 1 had written with token 2"),
        "{}",
        s.summary
    );
    let expected: Vec<u64> = vec![
        index_of(&events, 1, EventKind::Invoke, F::Write, 100),
        index_of(&events, 0, EventKind::Invoke, F::Write, 110),
        index_of(&events, 1, EventKind::Ok, F::Write, 120),
        index_of(&events, 0, EventKind::Ok, F::Write, 130),
    ];
    assert_eq!(s.indices, expected);
}

#[test]
fn stale_write_is_found_by_real_time_when_the_resource_reports_no_max_token() {
    let events = H::new()
        .write(1, (100, 110), EventKind::Ok, 2, None)
        .write(0, (200, 210), EventKind::Ok, 1, None)
        .write(2, (300, 310), EventKind::Ok, 3, None)
        .build();
    let r = check(&events, Property::Fenced);
    assert_eq!(kinds(&r.violations), vec![FindingKind::StaleWrite], "{r}");
    let s = &r.violations[0];
    assert_eq!(s.processes, vec![0, 1]);
    assert!(
        s.summary
            .contains("after process 1 had written with token 2 at 0.110 s"),
        "{}",
        s.summary
    );
}

#[test]
fn lost_updates_are_counted_with_pairs_that_wrote_the_same_value() {
    let events = H::new()
        .acquire(0, (0, 1), 1)
        .increment(0, 10, 0, EventKind::Ok)
        .increment(1, 11, 0, EventKind::Ok)
        .increment(2, 30, 1, EventKind::Ok)
        .final_read(9, 100, 2)
        .build();
    let r = check(&events, Property::Fenced);
    assert_eq!(r.verdict, Verdict::Invalid, "{r}");
    assert_eq!(kinds(&r.violations), vec![FindingKind::LostUpdate], "{r}");
    let l = &r.violations[0];
    assert_eq!(l.count, Some(1));
    assert!(l
        .indices
        .contains(&index_of(&events, 0, EventKind::Ok, F::Write, 13)));
    assert!(l
        .indices
        .contains(&index_of(&events, 1, EventKind::Ok, F::Write, 14)));
    assert!(!l
        .indices
        .contains(&index_of(&events, 2, EventKind::Ok, F::Write, 33)));
    assert!(l
        .indices
        .contains(&index_of(&events, 9, EventKind::Ok, F::Read, 101)));
    assert_eq!(l.processes, vec![0, 1]);
}

#[test]
fn counter_matching_acknowledged_increments_is_valid_and_info_writes_allow_more() {
    let events = H::new()
        .acquire(0, (0, 1), 1)
        .increment(0, 10, 0, EventKind::Ok)
        .increment(1, 20, 1, EventKind::Info)
        .final_read(9, 100, 2)
        .build();
    assert_eq!(check(&events, Property::Exclusive).verdict, Verdict::Valid);

    let phantom = H::new()
        .acquire(0, (0, 1), 1)
        .increment(0, 10, 0, EventKind::Ok)
        .increment(1, 20, 1, EventKind::Info)
        .final_read(9, 100, 5)
        .build();
    let r = check(&phantom, Property::Exclusive);
    assert_eq!(
        kinds(&r.violations),
        vec![FindingKind::PhantomIncrement],
        "{r}"
    );
    assert_eq!(r.violations[0].count, Some(3));
}

#[test]
fn counter_without_final_read_is_unknown() {
    let events = H::new()
        .acquire(0, (0, 1), 1)
        .increment(0, 10, 0, EventKind::Ok)
        .build();
    let r = check(&events, Property::Exclusive);
    assert_eq!(r.verdict, Verdict::Unknown, "{r}");
    assert!(r.unknowns[0].contains("final read"), "{:?}", r.unknowns);
}

/// Process 0 takes the lock and crashes; processes 1 and 2 retry every half second until 20 s.
fn crashed_holder(h: &mut H) -> &mut H {
    h.acquire(0, (0, 10), 1)
        .nemesis(100, F::Crash, &[], Some(0));
    for i in 0..40 {
        let t = 200 + i * 500;
        h.acquire_fail(1, (t, t + 400))
            .acquire_fail(2, (t + 50, t + 450));
    }
    h
}

#[test]
fn lock_never_granted_again_after_a_client_crash_is_a_deadlock() {
    let events = crashed_holder(&mut H::new()).build();
    let r = check(&events, Property::Fenced);
    // Liveness, not safety: nobody else ever held the lock.
    assert_eq!(r.verdict, Verdict::Stuck, "{r}");
    assert_eq!(kinds(&r.violations), vec![FindingKind::Deadlock], "{r}");
    let (lines, _) = r.violation_lines(3);
    assert!(lines[0].starts_with("STUCK deadlock: "), "{lines:?}");
    let d = &r.violations[0];
    let w = d.window.unwrap();
    assert_eq!((w.start_ns, w.end_ns), (200 * MS, 20_150 * MS));
    assert_eq!(d.processes, vec![0, 1, 2]);
    assert!(
        d.summary.contains("last holder was process 0 (token 1)"),
        "{}",
        d.summary
    );
    assert!(d.summary.contains("crashed at 0.100 s"), "{}", d.summary);
    assert!(d
        .indices
        .contains(&index_of(&events, 0, EventKind::Ok, F::Acquire, 10)));
    assert!(d
        .indices
        .contains(&index_of(&events, 1, EventKind::Fail, F::Acquire, 600)));
}

#[test]
fn a_deadlock_with_a_double_holder_is_unsafe_and_alone_is_stuck() {
    // Process 0 holds and crashes; process 3 also takes the lock meanwhile (a double holder),
    // then nobody gets it for 20 s: both findings are listed, and safety decides the verdict.
    let mut h = H::new();
    crashed_holder(&mut h)
        .acquire(3, (20, 30), 2)
        .release(3, (60, 70));
    let events = h.build();
    let r = check(&events, Property::Exclusive);
    let found = kinds(&r.violations);
    assert!(found.contains(&FindingKind::DoubleHolder), "{r}");
    assert!(found.contains(&FindingKind::Deadlock), "{r}");
    assert_eq!(r.verdict, Verdict::Invalid, "{r}");
    // Under the fenced property the double holder is an observation: only liveness is left.
    let r = check(&events, Property::Fenced);
    assert_eq!(kinds(&r.violations), vec![FindingKind::Deadlock], "{r}");
    assert_eq!(r.verdict, Verdict::Stuck, "{r}");
}

/// Process 0 asks at 0 with a 1 s lease and is granted only at 2 s; it holds until 2.8 s, and
/// process 1 is granted at 7.5 s, process 1 and 2 having asked all along. The lock was free
/// from 2.8 s to 7.5 s (4.7 s, under the 5 s threshold): no deadlock. Counting the hold's
/// lease from its request (ended at 1 s, before the grant) would take the whole hold for
/// free time, 5.5 s from the grant.
#[test]
fn a_late_grant_s_hold_is_not_free_time_for_a_deadlock() {
    let mut h = H::new();
    let ask = Value {
        lease_ms: Some(1000),
        ..Value::default()
    };
    let granted = |token| Value {
        token: Some(token),
        holder: Some("h".into()),
        ..Value::default()
    };
    h.op(
        0,
        F::Acquire,
        (0, 2_000),
        EventKind::Ok,
        ask.clone(),
        granted(1),
    )
    .release(0, (2_800, 2_810));
    for i in 0..14 {
        let t = 100 + i * 500;
        h.acquire_fail(1, (t, t + 400))
            .acquire_fail(2, (t + 50, t + 450));
    }
    h.op(
        1,
        F::Acquire,
        (7_100, 7_500),
        EventKind::Ok,
        ask,
        granted(2),
    )
    .release(1, (7_600, 7_610));
    let r = check(&h.build(), Property::Exclusive);
    assert!(
        !kinds(&r.violations).contains(&FindingKind::Deadlock),
        "{r}"
    );
    assert_eq!(r.verdict, Verdict::Valid, "{r}");
}

#[test]
fn a_long_wait_inside_a_fault_window_is_not_a_deadlock() {
    let events = crashed_holder(
        H::new()
            .nemesis(150, F::Partition, &["n1", "n2"], None)
            .nemesis(20_100, F::Heal, &["n1", "n2"], None),
    )
    .build();
    let r = check(&events, Property::Exclusive);
    assert_eq!(r.verdict, Verdict::Valid, "{r}");

    // Healed at 10 s, the 10 s of waiting after it are a deadlock again.
    let events = crashed_holder(H::new().nemesis(150, F::Partition, &["n1"], None).nemesis(
        10_000,
        F::Heal,
        &["n1"],
        None,
    ))
    .build();
    let r = check(&events, Property::Exclusive);
    assert_eq!(kinds(&r.violations), vec![FindingKind::Deadlock], "{r}");
    let w = r.violations[0].window.unwrap();
    assert_eq!((w.start_ns, w.end_ns), (10_000 * MS, 20_150 * MS));
}

#[test]
fn a_retired_process_stops_holding_at_its_info() {
    // Process 0's write times out at 100 ms: it is retired there, so process 1 acquiring at
    // 200 ms is no double holder, even though the nemesis later crashes process 0.
    let events = H::new()
        .acquire(0, (0, 10), 1)
        .write(0, (50, 100), EventKind::Info, 1, None)
        .acquire(1, (20, 200), 2)
        .release(1, (300, 310))
        .nemesis(1000, F::Crash, &[], Some(0))
        .build();
    let r = check(&events, Property::Exclusive);
    assert_eq!(r.verdict, Verdict::Valid, "{r}");
    assert_eq!(r.stats.writes_info, 1);

    // Without the info, process 0 believes it holds until it crashes.
    let events = H::new()
        .acquire(0, (0, 10), 1)
        .write(0, (50, 100), EventKind::Ok, 1, None)
        .acquire(1, (20, 200), 2)
        .release(1, (300, 310))
        .nemesis(1000, F::Crash, &[], Some(0))
        .build();
    let r = check(&events, Property::Exclusive);
    assert_eq!(kinds(&r.violations), vec![FindingKind::DoubleHolder], "{r}");
    assert!(
        r.violations[0].summary.contains("crashed at 1.000 s"),
        "{}",
        r.violations[0].summary
    );
}

#[test]
fn a_lost_renew_ends_the_interval_and_a_pair_is_reported_once() {
    let events = H::new()
        .acquire(0, (0, 10), 1)
        .op(
            0,
            F::Renew,
            (100, 150),
            EventKind::Fail,
            Value::default(),
            Value::default(),
        )
        .acquire(1, (20, 150), 2)
        .release(1, (200, 210))
        .build();
    assert_eq!(check(&events, Property::Exclusive).verdict, Verdict::Valid);

    // Process 0 never releases; process 1 takes the lock twice while 0 believes it holds it.
    let events = H::new()
        .acquire(0, (0, 10), 1)
        .acquire(1, (20, 100), 2)
        .release(1, (200, 210))
        .acquire(1, (300, 400), 3)
        .release(1, (500, 510))
        .write(0, (600, 610), EventKind::Ok, 1, Some(3))
        .build();
    let r = check(&events, Property::Exclusive);
    let doubles = r
        .violations
        .iter()
        .filter(|f| f.kind == FindingKind::DoubleHolder)
        .count();
    assert_eq!(doubles, 1, "{r}");
}

#[test]
fn the_same_pair_in_two_separate_episodes_is_reported_twice() {
    let events = H::new()
        .acquire(0, (0, 10), 1)
        .acquire(1, (20, 100), 2)
        .release(1, (200, 210))
        .release(0, (300, 310))
        .acquire(0, (400, 410), 3)
        .acquire(1, (420, 500), 4)
        .release(1, (600, 610))
        .release(0, (700, 710))
        .build();
    let r = check(&events, Property::Exclusive);
    let doubles: Vec<_> = r
        .violations
        .iter()
        .filter(|f| f.kind == FindingKind::DoubleHolder)
        .collect();
    assert_eq!(doubles.len(), 2, "{r}");
    assert_ne!(doubles[0].tokens, doubles[1].tokens, "{r}");
}

#[test]
fn no_successful_acquire_is_unknown() {
    let events = H::new()
        .acquire_fail(0, (0, 100))
        .acquire_fail(1, (10, 200))
        .build();
    let r = check(&events, Property::Exclusive);
    assert_eq!(r.verdict, Verdict::Unknown, "{r}");
    assert!(
        r.unknowns[0].contains("no acquire ever succeeded"),
        "{:?}",
        r.unknowns
    );
    assert_eq!(r.stats.acquires_fail, 2);
}

#[test]
fn report_round_trips_through_json_and_prints_one_line_per_violation() {
    let events = paused_holder(EventKind::Ok);
    let r = check(&events, Property::Exclusive);
    assert_eq!(r.violations.len(), 2, "{r}");
    let json = serde_json::to_string(&r).unwrap();
    assert!(json.contains(r#""kind":"double-holder""#), "{json}");
    assert!(json.contains(r#""verdict":"invalid""#), "{json}");
    assert_eq!(serde_json::from_str::<LockReport>(&json).unwrap(), r);
    let text = r.to_string();
    assert_eq!(
        text.lines().filter(|l| l.contains("VIOLATION")).count(),
        2,
        "{text}"
    );
    assert!(
        text.starts_with("lock check (exclusive): invalid"),
        "{text}"
    );
}

#[test]
fn hundred_thousand_events_check_quickly_and_find_the_one_overlap() {
    // 20 clients take turns; each turn is acquire, write, release (6 events).
    let mut h = H::new();
    let turns = 100_000 / 6;
    for i in 0..turns as u64 {
        let p = i % 20;
        let t = 1 + i * 10;
        h.acquire(p, (t, t + 1), i + 1)
            .write(
                p,
                (t + 2, t + 3),
                EventKind::Ok,
                i + 1,
                (i > 0).then_some(i),
            )
            .release(p, (t + 4, t + 5));
    }
    // One interloper holding across two turns.
    h.acquire(99, (5000, 5003), 1_000_000)
        .release(99, (5020, 5021));
    let events = h.build();
    assert!(events.len() >= 100_000);
    assert_eq!(fault_windows(&events).len(), 0);
    let started = std::time::Instant::now();
    let r = check(&events, Property::Exclusive);
    eprintln!("checked {} events in {:?}", events.len(), started.elapsed());
    assert_eq!(r.stats.acquires_ok, turns as u64 + 1);
    let doubles: Vec<_> = r
        .violations
        .iter()
        .filter(|f| f.kind == FindingKind::DoubleHolder)
        .collect();
    assert_eq!(doubles.len(), 2, "{r}");
    assert!(doubles.iter().all(|f| f.processes.contains(&99)));
}

#[test]
fn a_lock_granting_everyone_lists_at_most_max_listed_and_counts_the_rest() {
    // 500 processes all get the lock and write with decreasing tokens, nobody releases.
    let n = 500u64;
    let mut h = H::new();
    for p in 0..n {
        h.acquire(p, (p, p + 1), n - p);
    }
    for p in 0..n {
        let t = 1_000 + p * 2;
        h.write(p, (t, t + 1), EventKind::Ok, n - p, (p > 0).then_some(n));
    }
    let events = h.build();
    let r = check(&events, Property::Exclusive);
    assert_eq!(r.verdict, Verdict::Invalid);
    let listed = |k| r.violations.iter().filter(|f| f.kind == k).count();
    assert_eq!(listed(FindingKind::DoubleHolder), MAX_LISTED);
    assert_eq!(listed(FindingKind::StaleWrite), MAX_LISTED);
    let pairs = n * (n - 1) / 2;
    let stale = n - 1;
    assert_eq!(
        r.omitted_violations,
        pairs + stale - 2 * MAX_LISTED as u64,
        "{r}"
    );
    assert_eq!(r.stats.max_concurrent_holders, n);
    // Counted by kind, listed or not; printed: the first few of each kind and the counts.
    let counts: Vec<(FindingKind, u64)> = r
        .violation_counts
        .iter()
        .map(|c| (c.kind, c.count))
        .collect();
    assert_eq!(
        counts,
        [
            (FindingKind::DoubleHolder, pairs),
            (FindingKind::StaleWrite, stale)
        ]
    );
    let text = r.to_string();
    assert_eq!(
        text.matches("VIOLATION double-holder").count(),
        PRINTED_PER_KIND
    );
    assert!(
        text.contains(&format!(
            "… and {} more double-holder ({pairs} in all)",
            pairs - PRINTED_PER_KIND as u64
        )),
        "{text}"
    );
}

#[test]
fn a_hold_still_open_when_the_history_ends_overlaps_every_later_holder() {
    // Issue 12 item 11: process 0 takes the lock and is never heard from again; process 1
    // takes it later. Process 0 still believes it holds the lock when the history ends, so
    // both held it from 0.030 s on.
    let events = H::new()
        .acquire(0, (0, 10), 1)
        .acquire(1, (20, 30), 2)
        .write(1, (40, 50), EventKind::Ok, 2, Some(1))
        .release(1, (60, 70))
        .build();
    let r = check(&events, Property::Exclusive);
    assert_eq!(r.verdict, Verdict::Invalid, "{r}");
    assert_eq!(kinds(&r.violations), vec![FindingKind::DoubleHolder], "{r}");
    let d = &r.violations[0];
    assert_eq!(d.processes, vec![0, 1]);
    let w = d.window.expect("overlap window");
    assert_eq!((w.start_ns, w.end_ns), (30 * MS, 60 * MS));
    assert!(
        d.summary.contains("still held it when the history ended"),
        "{}",
        d.summary
    );
    assert_eq!(r.stats.max_concurrent_holders, 2);
}

#[test]
fn a_hold_still_open_at_the_end_stops_when_its_lease_ran_out() {
    // Process 0 holds a 100 ms lease from its acquire at 0 ms and is never heard from again;
    // process 1 takes the lock at 500 ms, after the lease ran out: no overlap. With a lease
    // of 550 ms the two overlap until it runs out; with 1 s, until the history ends.
    let history = |lease_ms: u64| {
        let granted = Value {
            token: Some(1),
            lease_ms: Some(lease_ms),
            ..Value::default()
        };
        let asked = Value {
            lease_ms: Some(lease_ms),
            ..Value::default()
        };
        H::new()
            .op(0, F::Acquire, (0, 10), EventKind::Ok, asked, granted)
            .acquire(1, (490, 500), 2)
            .release(1, (600, 610))
            .build()
    };
    let r = check(&history(100), Property::Exclusive);
    assert_eq!(r.verdict, Verdict::Valid, "{r}");
    assert_eq!(r.stats.max_concurrent_holders, 1);
    let r = check(&history(550), Property::Exclusive);
    assert_eq!(kinds(&r.violations), vec![FindingKind::DoubleHolder], "{r}");
    let w = r.violations[0].window.expect("overlap window");
    assert_eq!((w.start_ns, w.end_ns), (500 * MS, 550 * MS));
    assert!(
        r.violations[0].summary.contains("let its lease run out"),
        "{r}"
    );
    let r = check(&history(1000), Property::Exclusive);
    let w = r.violations[0].window.expect("overlap window");
    assert_eq!((w.start_ns, w.end_ns), (500 * MS, 600 * MS));
    assert!(
        r.violations[0]
            .summary
            .contains("still held it when the history ended"),
        "{r}"
    );
}

/// `events` with each client operation of process `p` on lock `locks[p]` instead of "l".
fn on_locks(mut events: Vec<Event>, locks: &[&str]) -> Vec<Event> {
    for e in &mut events {
        if let (Process::Client(p), Some(_)) = (e.process, &e.lock) {
            e.lock = Some(locks[p as usize].to_string());
        }
    }
    events
}

#[test]
fn many_locks_a_double_holder_on_one_lock_is_found_and_holders_of_different_locks_are_not() {
    // Processes 0 and 1 hold "a" and "b" at the same time: no violation. Process 2 takes "a"
    // while 0 still holds it: a double holder on "a", and its write with the newer token makes
    // 0's late write stale on "a"'s resource only.
    // `max`: what "a"'s resource reports to process 0's late write.
    let history = |locks: &[&str], max: Option<u64>| {
        let mut h = H::new();
        h.acquire(0, (0, 1), 1)
            .acquire(1, (2, 3), 1)
            .write(1, (4, 5), EventKind::Ok, 1, None)
            .acquire(2, (10, 11), 2)
            .write(2, (12, 13), EventKind::Ok, 2, None)
            .release(2, (14, 15))
            .write(0, (20, 21), EventKind::Ok, 1, max)
            .release(0, (22, 23))
            .release(1, (24, 25));
        on_locks(h.build(), locks)
    };
    let events = history(&["a", "b", "a"], Some(2));
    let report = check(&events, Property::Exclusive);
    assert_eq!(report.verdict, Verdict::Invalid, "{report}");
    assert_eq!(
        kinds(&report.violations),
        vec![FindingKind::DoubleHolder, FindingKind::StaleWrite],
        "{report}"
    );
    for v in &report.violations {
        assert_eq!(v.lock.as_deref(), Some("a"), "{report}");
        assert!(!v.processes.contains(&1), "{report}");
    }
    assert_eq!(report.stats.max_concurrent_holders, 2);
    // Per lock: "a" with its two findings first, then "b", clean.
    let rows: Vec<(&str, u64, u64, u64, u64)> = report
        .per_lock
        .iter()
        .map(|c| {
            (
                c.lock.as_str(),
                c.violations,
                c.double_holders,
                c.stale_writes,
                c.ops,
            )
        })
        .collect();
    assert_eq!(rows, vec![("a", 2, 1, 1, 6), ("b", 0, 0, 0, 3)]);

    // The same history with process 2 on "c" (so "a"'s resource never saw token 2): three
    // holders of three locks, nothing wrong.
    let events = history(&["a", "b", "c"], None);
    let report = check(&events, Property::Exclusive);
    assert_eq!(report.verdict, Verdict::Valid, "{report}");
    assert!(report.violations.is_empty(), "{report}");
    assert_eq!(report.stats.max_concurrent_holders, 1, "{report}");
    assert_eq!(report.per_lock.len(), 3);
    assert!(report.per_lock.iter().all(|c| c.violations == 0));

    // Linearizability is per lock too (P-compositionality): valid with three locks, invalid
    // when "a" has two holders.
    let params = LockCheckParams {
        property: Property::Exclusive,
        deadlock_ms: 5_000,
    };
    let lin = |events: &[Event]| {
        lockpick_checker::run_checks::check_run(events, &params)
            .linearizability
            .expect("a lock history has a model")
            .verdict
    };
    assert_eq!(lin(&history(&["a", "b", "c"], None)), Verdict::Valid);
    assert_eq!(lin(&history(&["a", "b", "a"], Some(2))), Verdict::Invalid);
}
