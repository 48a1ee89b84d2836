//! Lock models on hand-built lockpick histories: two owners, a release by a non-owner, a
//! token that goes backwards and an expiry before the lease ran out are each rejected; the
//! correct variants are accepted, and a grant to the process that holds the lock is a re-entry.

use lockpick_checker::history::{Event, EventKind, Process, Value, F, FORMAT_VERSION};
use lockpick_checker::lin_search::Budget;
use lockpick_checker::linearizability::check_events;
use lockpick_checker::models::{lease, mutex, Model};
use lockpick_checker::verdict::Verdict;

/// One client operation: process, verb, invocation and completion times in ms, completion
/// type, lease length asked for, token granted.
struct Step {
    p: u64,
    f: F,
    call_ms: u64,
    ret_ms: u64,
    kind: EventKind,
    lease_ms: Option<u64>,
    token: Option<u64>,
}

fn op(p: u64, f: F, call_ms: u64, ret_ms: u64) -> Step {
    Step {
        p,
        f,
        call_ms,
        ret_ms,
        kind: EventKind::Ok,
        lease_ms: None,
        token: None,
    }
}

impl Step {
    fn lease(mut self, ms: u64) -> Self {
        self.lease_ms = Some(ms);
        self
    }
    fn token(mut self, t: u64) -> Self {
        self.token = Some(t);
        self
    }
    fn kind(mut self, k: EventKind) -> Self {
        self.kind = k;
        self
    }
}

/// The events of the steps, in time order, on lock "l".
fn events(steps: &[Step]) -> Vec<Event> {
    let mut raw: Vec<(u64, u8, &Step)> = Vec::new();
    for s in steps {
        raw.push((s.call_ms, 0, s));
        raw.push((s.ret_ms, 1, s));
    }
    raw.sort_by_key(|&(t, k, s)| (t, k, s.p));
    raw.iter()
        .enumerate()
        .map(|(i, &(t, k, s))| Event {
            v: FORMAT_VERSION,
            index: i as u64,
            time_ns: t * 1_000_000,
            process: Process::Client(s.p),
            kind: if k == 0 { EventKind::Invoke } else { s.kind },
            f: s.f,
            lock: Some("l".into()),
            value: Value {
                lease_ms: if k == 0 { s.lease_ms } else { None },
                token: if k == 1 { s.token } else { None },
                ..Value::default()
            },
            error: None,
        })
        .collect()
}

fn verdict(model: &'static dyn Model, steps: &[Step]) -> Verdict {
    let report = check_events(&events(steps), model, &Budget::default()).expect("check");
    if report.verdict == Verdict::Invalid {
        let v = report.violation.as_ref().expect("violation explained");
        assert!(!v.window.is_empty(), "{report}");
    }
    report.verdict
}

#[test]
fn mutex_rejects_two_owners_and_accepts_handover() {
    let two_owners = [op(1, F::Acquire, 0, 1), op(2, F::Acquire, 2, 3)];
    assert_eq!(verdict(&mutex::MUTEX, &two_owners), Verdict::Invalid);
    let handover = [
        op(1, F::Acquire, 0, 1),
        op(1, F::Release, 2, 3),
        op(2, F::Acquire, 4, 5),
        op(2, F::Release, 6, 7),
    ];
    assert_eq!(verdict(&mutex::MUTEX, &handover), Verdict::Valid);
    // 2's acquire overlaps 1's release, so it may have taken effect after it.
    let overlapping = [
        op(1, F::Acquire, 0, 1),
        op(2, F::Acquire, 2, 9),
        op(1, F::Release, 3, 4),
    ];
    assert_eq!(verdict(&mutex::MUTEX, &overlapping), Verdict::Valid);
}

#[test]
fn mutex_rejects_release_by_a_non_owner() {
    let steps = [op(1, F::Acquire, 0, 1), op(2, F::Release, 2, 3)];
    assert_eq!(verdict(&mutex::MUTEX, &steps), Verdict::Invalid);
    let renew_by_other = [op(1, F::Acquire, 0, 1), op(2, F::Renew, 2, 3)];
    assert_eq!(verdict(&mutex::MUTEX, &renew_by_other), Verdict::Invalid);
}

#[test]
fn acquire_of_unknown_outcome_may_never_have_happened() {
    let steps = [
        op(1, F::Acquire, 0, 1).kind(EventKind::Info),
        op(2, F::Acquire, 2, 3),
        op(2, F::Release, 4, 5),
    ];
    assert_eq!(verdict(&mutex::MUTEX, &steps), Verdict::Valid);
    // A failed acquire did not happen at all.
    let failed = [
        op(1, F::Acquire, 0, 1).kind(EventKind::Fail),
        op(2, F::Acquire, 2, 3),
    ];
    assert_eq!(verdict(&mutex::MUTEX, &failed), Verdict::Valid);
}

#[test]
fn fenced_mutex_rejects_a_token_that_goes_backwards() {
    let backwards = [
        op(1, F::Acquire, 0, 1).token(5),
        op(1, F::Release, 2, 3),
        op(2, F::Acquire, 4, 5).token(3),
    ];
    assert_eq!(verdict(&mutex::FENCED_MUTEX, &backwards), Verdict::Invalid);
    assert_eq!(verdict(&mutex::MUTEX, &backwards), Verdict::Valid);
    let forwards = [
        op(1, F::Acquire, 0, 1).token(5),
        op(1, F::Release, 2, 3),
        op(2, F::Acquire, 4, 5).token(6),
    ];
    assert_eq!(verdict(&mutex::FENCED_MUTEX, &forwards), Verdict::Valid);
}

#[test]
fn lease_rejects_expiry_before_the_lease_ran_out() {
    let early = [
        op(1, F::Acquire, 0, 10).lease(1000),
        op(2, F::Acquire, 500, 510).lease(1000),
    ];
    assert_eq!(verdict(&lease::LEASE, &early), Verdict::Invalid);
    let after = [
        op(1, F::Acquire, 0, 10).lease(1000),
        op(2, F::Acquire, 1500, 1510).lease(1000),
    ];
    assert_eq!(verdict(&lease::LEASE, &after), Verdict::Valid);
    // The old holder's release after losing the lease is a second owner's release.
    let stale_release = [
        op(1, F::Acquire, 0, 10).lease(1000),
        op(2, F::Acquire, 1500, 1510).lease(1000),
        op(1, F::Release, 1600, 1610),
    ];
    assert_eq!(verdict(&lease::LEASE, &stale_release), Verdict::Invalid);
}

#[test]
fn lease_renewal_pushes_expiry_out() {
    let renewed = [
        op(1, F::Acquire, 0, 10).lease(1000),
        op(1, F::Renew, 800, 810).lease(1000),
        op(2, F::Acquire, 1500, 1510).lease(1000),
    ];
    assert_eq!(verdict(&lease::LEASE, &renewed), Verdict::Invalid);
    let after_renewal = [
        op(1, F::Acquire, 0, 10).lease(1000),
        op(1, F::Renew, 800, 810).lease(1000),
        op(2, F::Acquire, 1900, 1910).lease(1000),
    ];
    assert_eq!(verdict(&lease::LEASE, &after_renewal), Verdict::Valid);
}

#[test]
fn a_renewal_without_a_length_renews_for_the_lease_its_holder_asked_for() {
    // An etcd keep-alive or a ZooKeeper heartbeat names no length: it renews the lease for
    // the TTL it was granted with. Read as a lease without end, every grant after the
    // holder's lease ran out would look impossible (seen on etcd × leader-isolation).
    let other_at = |at: u64| {
        [
            op(1, F::Acquire, 0, 10).lease(1000),
            op(1, F::Renew, 800, 810),
            op(2, F::Acquire, at, at + 10).lease(1000),
        ]
    };
    assert_eq!(verdict(&lease::LEASE, &other_at(1500)), Verdict::Invalid);
    assert_eq!(verdict(&lease::LEASE, &other_at(1900)), Verdict::Valid);
}

#[test]
fn a_grant_to_the_process_that_holds_the_lock_is_a_re_entry_not_a_second_holder() {
    // 1's release failed (it did not happen), so 1 still holds the lock when it acquires
    // again: a reentrant lock grants that at once (Redisson's MultiLock after an unlock that
    // stopped at a sub-lock a crashed server forgot).
    let reentry = |m: &'static dyn Model| {
        let steps = [
            op(1, F::Acquire, 0, 10).lease(1000),
            op(1, F::Release, 100, 110).kind(EventKind::Fail),
            op(1, F::Acquire, 120, 130).lease(1000),
            op(1, F::Release, 200, 210),
            op(2, F::Acquire, 300, 310).lease(1000),
        ];
        verdict(m, &steps)
    };
    assert_eq!(reentry(&lease::LEASE), Verdict::Valid);
    assert_eq!(reentry(&mutex::MUTEX), Verdict::Valid);
    // Another process is still refused while the holder's lease runs, before and after the
    // holder re-entered: the re-entry's lease pushes the bound out as a renewal does.
    // 1 re-enters at 800 ms, 2 is granted at `at` ms.
    let other_at = |at: u64| {
        [
            op(1, F::Acquire, 0, 10).lease(1000),
            op(1, F::Release, 100, 110).kind(EventKind::Fail),
            op(1, F::Acquire, 800, 810).lease(1000),
            op(2, F::Acquire, at, at + 10).lease(1000),
        ]
    };
    assert_eq!(verdict(&lease::LEASE, &other_at(1500)), Verdict::Invalid);
    assert_eq!(verdict(&mutex::MUTEX, &other_at(1500)), Verdict::Invalid);
    assert_eq!(verdict(&lease::LEASE, &other_at(1900)), Verdict::Valid);
    // A re-entry may repeat the holder's token, never go below it; a new holder must exceed it.
    let fenced = |again: u64, next: u64| {
        let steps = [
            op(1, F::Acquire, 0, 10).token(5),
            op(1, F::Release, 100, 110).kind(EventKind::Fail),
            op(1, F::Acquire, 120, 130).token(again),
            op(1, F::Release, 200, 210),
            op(2, F::Acquire, 300, 310).token(next),
        ];
        verdict(&mutex::FENCED_MUTEX, &steps)
    };
    assert_eq!(fenced(5, 6), Verdict::Valid);
    assert_eq!(fenced(7, 8), Verdict::Valid);
    assert_eq!(fenced(4, 6), Verdict::Invalid);
    assert_eq!(fenced(7, 6), Verdict::Invalid);
}

#[test]
fn an_acquire_never_answered_cannot_take_over_a_live_lease() {
    // 3 asked long ago and never heard back; its lease, counted from its asking, ran out
    // before 2 was granted. Had 3 been granted between 1 and 2, that was no earlier than 1's
    // lease could run out, and it held the lock from then: a grant to 2 while 1's lease ran
    // is a double grant whatever 3 did. (Read as running out 100 ms after 3 asked, 3's lease
    // once let the search slip it between 1 and 2 and hide the double grant.) 3 acts again
    // at the end, so that the search must weigh its first acquire (see below).
    let other_at = |at: u64| {
        [
            op(3, F::Acquire, 0, 5).lease(100).kind(EventKind::Info),
            op(1, F::Acquire, 10, 20).lease(1000),
            op(2, F::Acquire, at, at + 10).lease(1000),
            op(3, F::Acquire, 9000, 9010).lease(1000),
        ]
    };
    assert_eq!(verdict(&lease::LEASE, &other_at(500)), Verdict::Invalid);
    assert_eq!(verdict(&lease::LEASE, &other_at(1500)), Verdict::Valid);
    // Nor a lock its holder took without a lease, which is held until released.
    let unleased = [
        op(3, F::Acquire, 0, 5).lease(100).kind(EventKind::Info),
        op(1, F::Acquire, 10, 20).lease(1000),
        op(1, F::Acquire, 30, 40),
        op(2, F::Acquire, 5000, 5010).lease(1000),
        op(3, F::Acquire, 9000, 9010).lease(1000),
    ];
    assert_eq!(verdict(&lease::LEASE, &unleased), Verdict::Invalid);
}

/// `cycles` holders, 10 ms apart, each granted a 1 s lease and releasing it; while each holds,
/// a client asks too and never hears back, and is retired (Jepsen's `info`: the next
/// operation of that client comes from a new process). With `later`, the first retired
/// process is not retired after all and releases the lock much later, its acquire having been
/// granted.
fn retired_askers(cycles: u64, later: bool) -> Vec<Step> {
    let mut steps = Vec::new();
    for i in 0..cycles {
        let t = 10 * i;
        steps.push(op(i, F::Acquire, t, t + 2).lease(1000));
        steps.push(
            op(1000 + i, F::Acquire, t + 3, t + 4)
                .lease(1000)
                .kind(EventKind::Info),
        );
        steps.push(op(i, F::Release, t + 6, t + 7));
    }
    if later {
        steps.push(op(1000, F::Release, 10 * cycles + 10, 10 * cycles + 11));
    }
    steps
}

#[test]
fn acquires_of_retired_processes_cost_the_search_nothing() {
    // Each such acquire could have been granted at any free moment after it was asked, and
    // the search once tried every set of them at every one (a leader crash of etcd left 27,
    // and the run's check ran out of time). Taken, one only keeps others out: its owner never
    // acts again. So the search leaves them out, and 40 of them fit in a few MiB.
    let budget = Budget {
        time: None,
        memory_bytes: Some(8 << 20),
        threads: 1,
    };
    for model in [&lease::LEASE as &dyn Model, &mutex::MUTEX] {
        let report =
            check_events(&events(&retired_askers(40, false)), model, &budget).expect("check");
        assert_eq!(report.verdict, Verdict::Valid, "{}: {report}", model.name());
    }
    // A process that acts again is not retired: its acquire may be what explains its
    // release, and the search takes it.
    let report =
        check_events(&events(&retired_askers(3, true)), &lease::LEASE, &budget).expect("check");
    assert_eq!(report.verdict, Verdict::Valid, "{report}");
}
