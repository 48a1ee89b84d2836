//! Explanations that name what made a violation possible, on hand-built histories: one test
//! per culprit kind (a stale release by a third process paused inside it, a late renewal, a
//! grant after the lease ran out, a write whose token went backwards), each checking the
//! sentence names the culprit and the fault over it, and the evidence holds its lines; and
//! "no fault active" only when no fault overlapped any operation of the chain.

use lockpick_checker::history::{Event, EventKind, Process, Value, F, FORMAT_VERSION};
use lockpick_checker::lock::{check_locks, Finding, FindingKind, LockCheckParams, Property};

const MS: u64 = 1_000_000;

/// Events given in any order, ordered by time (ties keep insertion order) and numbered by
/// [`H::build`]; times in milliseconds, every client operation on lock "l".
#[derive(Default)]
struct H(Vec<Event>);

impl H {
    fn event(&mut self, ms: u64, p: Process, kind: EventKind, f: F, value: Value) -> &mut H {
        let lock = matches!(p, Process::Client(_)).then(|| "l".to_string());
        self.0.push(Event {
            v: FORMAT_VERSION,
            index: 0,
            time_ns: ms * MS,
            process: p,
            kind,
            f,
            lock,
            value,
            error: None,
        });
        self
    }

    fn op(&mut self, p: u64, f: F, at: (u64, u64), args: Value, result: Value) -> &mut H {
        self.event(at.0, Process::Client(p), EventKind::Invoke, f, args);
        self.event(at.1, Process::Client(p), EventKind::Ok, f, result)
    }

    fn acquire(&mut self, p: u64, at: (u64, u64), token: u64, lease_ms: Option<u64>) -> &mut H {
        let args = Value {
            lease_ms,
            ..Value::default()
        };
        let result = Value {
            token: Some(token),
            lease_ms,
            ..Value::default()
        };
        self.op(p, F::Acquire, at, args, result)
    }

    fn simple(&mut self, p: u64, f: F, at: (u64, u64)) -> &mut H {
        self.op(p, f, at, Value::default(), Value::default())
    }

    fn write(&mut self, p: u64, at: (u64, u64), token: u64) -> &mut H {
        let v = Value {
            token: Some(token),
            ..Value::default()
        };
        self.op(p, F::Write, at, v.clone(), v)
    }

    /// A pause of client `c` from `from` to `to`; `inside` says, for a pause inside a
    /// request, whether its reply had already come.
    fn pause(&mut self, c: u64, (from, to): (u64, u64), inside: Option<bool>) -> &mut H {
        let (point, note) = match inside {
            Some(came) => (
                "during-op",
                Some(format!(
                    "in release request 3 of process {c}, 200 µs after it was sent; {}",
                    if came {
                        "its reply had already come"
                    } else {
                        "no reply yet"
                    }
                )),
            ),
            None => ("after-acquire", None),
        };
        let pause = Value {
            client: Some(c),
            point: Some(point.to_string()),
            ms: Some(to - from),
            note,
            ..Value::default()
        };
        let resume = Value {
            client: Some(c),
            ..Value::default()
        };
        self.event(from, Process::Nemesis, EventKind::Info, F::Pause, pause);
        self.event(to, Process::Nemesis, EventKind::Info, F::Resume, resume)
    }

    fn partition(&mut self, (from, to): (u64, u64)) -> &mut H {
        let v = Value {
            nodes: vec!["n1".to_string()],
            ..Value::default()
        };
        self.event(
            from,
            Process::Nemesis,
            EventKind::Info,
            F::Partition,
            v.clone(),
        );
        self.event(to, Process::Nemesis, EventKind::Info, F::Heal, v)
    }

    fn build(&self) -> Vec<Event> {
        let mut events = self.0.clone();
        events.sort_by_key(|e| e.time_ns);
        for (i, e) in events.iter_mut().enumerate() {
            e.index = i as u64;
        }
        events
    }
}

fn index_of(events: &[Event], p: u64, kind: EventKind, f: F, ms: u64) -> u64 {
    events
        .iter()
        .find(|e| {
            e.process == Process::Client(p) && e.kind == kind && e.f == f && e.time_ns == ms * MS
        })
        .unwrap_or_else(|| panic!("no {kind:?} {f} of {p} at {ms} ms"))
        .index
}

fn findings(events: &[Event], property: Property, kind: FindingKind) -> Vec<Finding> {
    let r = check_locks(
        events,
        &LockCheckParams {
            property,
            deadlock_ms: 0,
        },
    );
    r.violations
        .into_iter()
        .chain(r.observations)
        .filter(|f| f.kind == kind)
        .collect()
}

/// The double holder of processes `a` and `b`.
fn double(events: &[Event], a: u64, b: u64) -> Finding {
    let all = findings(events, Property::Exclusive, FindingKind::DoubleHolder);
    all.iter()
        .find(|f| f.processes[..2] == [a, b])
        .unwrap_or_else(|| panic!("no double holder of {a} and {b}: {all:#?}"))
        .clone()
}

/// The paused clients named in the finding's faults.
fn paused(f: &Finding) -> Vec<Option<u64>> {
    f.faults.iter().map(|w| w.client).collect()
}

/// Process 2's release is stopped inside its request past its lease; process 0 is granted
/// the lock meanwhile, the release deletes process 0's key and process 1 is granted it too.
/// Process 3 is paused during the overlap (nothing to do with it), and process 2 was paused
/// once before inside a request whose reply had already come.
fn stale_release() -> H {
    let mut h = H::default();
    h.acquire(2, (0, 10), 1, Some(800))
        .simple(2, F::Write, (20, 300))
        .pause(2, (30, 290), Some(true))
        .simple(2, F::Release, (400, 1260))
        .pause(2, (401, 1250), Some(false))
        .acquire(0, (700, 1210), 2, Some(800))
        .acquire(1, (500, 1300), 3, Some(800))
        .pause(3, (1310, 1350), None)
        .simple(0, F::Release, (1400, 1410))
        .simple(1, F::Release, (1500, 1510));
    h
}

#[test]
fn a_stale_release_by_a_third_process_is_named_first_with_the_pause_inside_it() {
    let events = stale_release().build();
    let d = double(&events, 0, 1);
    assert!(
        d.summary.starts_with(
            "process 2's release (sent 0.400 s, answered 1.260 s, paused 0.849 s inside it) deleted process 0's key: processes 0 and 1 both believed"
        ),
        "{}",
        d.summary
    );
    // The pause inside the release, not the one whose reply had come, nor process 3's.
    assert_eq!(paused(&d), vec![Some(2)], "{d:#?}");
    assert_eq!(d.faults[0].start_ns, 401 * MS);
    assert!(d
        .summary
        .ends_with("faults active: pause of client 2 for 0.849 s from 0.401 s"));
    for (kind, ms) in [(EventKind::Invoke, 400), (EventKind::Ok, 1260)] {
        let i = index_of(&events, 2, kind, F::Release, ms);
        assert!(d.indices.contains(&i), "{kind:?} of the release: {d:#?}");
    }
    assert_eq!(d.processes, vec![0, 1]);
}

#[test]
fn a_release_answered_just_after_the_next_grant_is_still_the_culprit() {
    // The DEL came before process 1's grant was recorded, its reply a moment after.
    let mut h = stale_release();
    h.0.retain(|e| !(e.process == Process::Client(2) && e.f == F::Release));
    h.simple(2, F::Release, (400, 1302));
    let events = h.build();
    let d = double(&events, 0, 1);
    assert!(
        d.summary.starts_with(
            "process 2's release (sent 0.400 s, answered 1.302 s, paused 0.849 s inside it) deleted process 0's key"
        ),
        "{}",
        d.summary
    );
}

#[test]
fn a_release_answered_just_before_the_holders_grant_is_named_as_a_possibility() {
    // Process 2's lease ran out (0.81 s) while it was stopped inside its release; process 0 was
    // granted the lock, and the release's reply came back 5 ms before process 0's did: the DEL
    // may have reached the server after process 0's SET. Nothing else explains process 1's
    // grant, so the sentence names the release, as a possibility.
    let mut h = stale_release();
    h.0.retain(|e| !(e.process == Process::Client(2) && e.f == F::Release));
    h.simple(2, F::Release, (400, 1205));
    let events = h.build();
    let d = double(&events, 0, 1);
    assert!(
        d.summary.starts_with(
            "process 2's release (sent 0.400 s, answered 1.205 s, paused 0.849 s inside it) may have deleted process 0's key (its answer came before process 0's grant, which it may have reached the server after: the two replies crossed): processes 0 and 1 both believed"
        ),
        "{}",
        d.summary
    );
    assert_eq!(paused(&d), vec![Some(2)], "{d:#?}");
    let i = index_of(&events, 2, EventKind::Ok, F::Release, 1205);
    assert!(d.indices.contains(&i), "{d:#?}");
    // Answered within its lease, the same release let go for process 0: it is not named.
    let mut h = stale_release();
    h.0.retain(|e| !(e.process == Process::Client(2) && e.f == F::Release));
    h.0.retain(|e| {
        !(e.process == Process::Nemesis && e.time_ns >= 401 * MS && e.time_ns <= 1250 * MS)
    });
    h.simple(2, F::Release, (750, 760));
    let d = double(&h.build(), 0, 1);
    assert!(
        d.summary.starts_with("processes 0 and 1 both believed"),
        "{}",
        d.summary
    );
}

#[test]
fn a_late_renewal_that_overwrote_the_key_is_named_and_so_is_the_lease_that_ran_out() {
    // Process 2's lease (500 ms from its grant's reply at 10 ms) runs out while its renewal
    // is stopped inside its request; process 0 is granted the lock, the renewal overwrites its key, the renewed
    // lease (from 400 ms) runs out at 900 ms and process 1 is granted it too.
    let events = H::default()
        .acquire(2, (0, 10), 1, Some(500))
        .simple(2, F::Renew, (400, 750))
        .pause(2, (401, 740), Some(false))
        .acquire(0, (450, 600), 2, Some(500))
        .acquire(1, (620, 1000), 3, Some(500))
        .simple(0, F::Release, (1050, 1060))
        .simple(2, F::Release, (1100, 1110))
        .simple(1, F::Release, (1200, 1210))
        .build();
    let d = double(&events, 0, 1);
    assert!(
        d.summary.starts_with(
            "process 2's renewal (sent 0.400 s, answered 0.750 s, paused 0.339 s inside it) overwrote process 0's key: processes 0 and 1"
        ),
        "{}",
        d.summary
    );
    assert_eq!(paused(&d), vec![Some(2)], "{d:#?}");
    for (kind, ms) in [(EventKind::Invoke, 400), (EventKind::Ok, 750)] {
        let i = index_of(&events, 2, kind, F::Renew, ms);
        assert!(d.indices.contains(&i), "{kind:?} of the renewal: {d:#?}");
    }
    // Process 2 itself held on past its lease: process 0's grant came after it ran out.
    let e = double(&events, 2, 0);
    assert!(
        e.summary.starts_with(
            "process 2's lease ran out at 0.510 s and process 0 was granted the lock at 0.600 s: "
        ),
        "{}",
        e.summary
    );
}

#[test]
fn a_grant_after_the_lease_ran_out_names_the_expiry_the_late_write_and_the_holders_pause() {
    // The lease of 300 ms the grant reported at 10 ms ran out at 310 ms.
    let events = H::default()
        .acquire(0, (0, 10), 1, Some(300))
        .pause(0, (20, 800), None)
        .acquire(1, (100, 400), 2, Some(300))
        .pause(3, (450, 500), None)
        .write(0, (810, 820), 1)
        .simple(0, F::Release, (900, 910))
        .simple(1, F::Release, (1000, 1010))
        .build();
    let d = double(&events, 0, 1);
    assert!(
        d.summary.starts_with(
            "process 0's lease ran out at 0.310 s and process 1 was granted the lock at 0.400 s; process 0 wrote at 0.810 s, 0.500 s after its lease ran out: processes 0 and 1"
        ),
        "{}",
        d.summary
    );
    assert_eq!(paused(&d), vec![Some(0)], "{d:#?}");
}

#[test]
fn a_write_whose_token_went_backwards_names_the_writers_pause_only() {
    let events = H::default()
        .acquire(0, (0, 10), 1, None)
        .pause(0, (20, 900), None)
        .acquire(1, (100, 400), 2, None)
        .write(1, (410, 420), 2)
        .pause(3, (450, 500), None)
        .write(0, (910, 920), 1)
        .simple(0, F::Release, (930, 940))
        .simple(1, F::Release, (1000, 1010))
        .build();
    let all = findings(&events, Property::Fenced, FindingKind::StaleWrite);
    let [s] = &all[..] else { panic!("{all:#?}") };
    assert!(
        s.summary.starts_with(
            "process 0 wrote with token 1 at 0.910 s after process 1 had written with token 2 at 0.420 s; process 0 had been paused 0.880 s"
        ),
        "{}",
        s.summary
    );
    assert_eq!(paused(s), vec![Some(0)], "{s:#?}");
    for (kind, ms) in [(EventKind::Invoke, 910), (EventKind::Ok, 920)] {
        let i = index_of(&events, 0, kind, F::Write, ms);
        assert!(s.indices.contains(&i), "{kind:?} of the write: {s:#?}");
    }
}

#[test]
fn no_fault_active_only_when_none_overlapped_any_operation_of_the_chain() {
    // A stale release with no fault over it: a partition over the second grant's request is
    // still named, as a fault of the chain.
    let chain = |partition: (u64, u64)| {
        H::default()
            .acquire(2, (0, 10), 1, None)
            .simple(2, F::Release, (400, 1260))
            .acquire(0, (700, 1210), 2, None)
            .acquire(1, (1270, 1300), 3, None)
            .simple(0, F::Release, (1400, 1410))
            .simple(1, F::Release, (1500, 1510))
            .partition(partition)
            .build()
    };
    let d = double(&chain((1280, 1290)), 0, 1);
    assert!(
        d.summary.starts_with(
            "process 2's release (sent 0.400 s, answered 1.260 s) deleted process 0's key: "
        ),
        "{}",
        d.summary
    );
    assert!(
        d.summary
            .ends_with("faults active: partition of n1 for 0.010 s from 1.280 s"),
        "{}",
        d.summary
    );
    assert_eq!(d.faults.len(), 1);
    // Before process 0 asked for the lock, and over nothing of the chain.
    let d = double(&chain((100, 200)), 0, 1);
    assert!(d.summary.ends_with("no fault active"), "{}", d.summary);
    assert!(d.faults.is_empty());
}

#[test]
fn a_release_whose_lease_still_ran_when_the_holder_was_granted_is_not_the_culprit() {
    // Process 3 releases its own key at once and its reply comes late, after process 2's
    // grant: its lease (from 60 ms, 800 ms) still ran then, so process 2's grant shows the
    // key was gone already. Process 1's release, stopped past its lease, deleted process 2's
    // key, and process 1 took the lock again.
    let events = H::default()
        .acquire(1, (0, 10), 1, Some(100))
        .simple(1, F::Release, (50, 415))
        .pause(1, (51, 400), Some(false))
        .acquire(3, (60, 150), 2, Some(800))
        .simple(3, F::Release, (300, 420))
        .acquire(2, (310, 410), 3, Some(800))
        .acquire(1, (416, 430), 4, Some(800))
        .simple(2, F::Release, (500, 510))
        .simple(1, F::Release, (600, 610))
        .build();
    let d = double(&events, 2, 1);
    assert!(
        d.summary.starts_with(
            "process 1's release (sent 0.050 s, answered 0.415 s, paused 0.349 s inside it) deleted process 2's key"
        ),
        "{}",
        d.summary
    );
}

#[test]
fn a_release_whose_own_key_another_stale_release_removed_is_still_named() {
    // Process 1 reads its own key, then stops inside its release; process 3's late release
    // deletes that key, process 2 is granted the lock long before process 1's lease would
    // have run out, and process 1's release then deletes process 2's key: stale deletes
    // cascade, so a release whose lease still ran is ranked lower, not left out.
    let events = H::default()
        .acquire(1, (0, 10), 1, Some(800))
        .simple(1, F::Release, (100, 700))
        .pause(1, (101, 690), Some(false))
        .simple(3, F::Release, (140, 150))
        .acquire(2, (160, 200), 2, Some(800))
        .acquire(0, (650, 710), 3, Some(800))
        .simple(2, F::Release, (800, 810))
        .simple(0, F::Release, (900, 910))
        .build();
    let d = double(&events, 2, 0);
    assert!(
        d.summary.starts_with(
            "process 1's release (sent 0.100 s, answered 0.700 s, paused 0.589 s inside it) deleted process 2's key"
        ),
        "{}",
        d.summary
    );
}

#[test]
fn a_lease_counted_from_a_request_long_before_the_grant_says_so() {
    // An adapter whose library names no lease: lockpick counts the 1000 ms it asked for from
    // the acquire's request at 100 ms, though the grant came at 700 ms after waiting. The
    // sentence says where the count began, or 1.100 s reads as too early for a 1 s lease, and
    // that the lease is only the one asked for: a session the library keeps alive (Curator's,
    // etcd's) may outlast it unseen, so "ran out" is lockpick's count, not the server's.
    let asked = Value {
        lease_ms: Some(1000),
        ..Value::default()
    };
    let granted = Value {
        token: Some(1),
        ..Value::default()
    };
    let events = H::default()
        .op(0, F::Acquire, (100, 700), asked.clone(), granted)
        .pause(0, (710, 1500), None)
        .acquire(1, (800, 1200), 2, Some(1000))
        .write(0, (1510, 1520), 1)
        .simple(0, F::Release, (1600, 1610))
        .simple(1, F::Release, (1700, 1710))
        .build();
    let d = double(&events, 0, 1);
    assert!(
        d.summary.starts_with(
            "process 0's lease, counted from its request at 0.100 s, ran out at 1.100 s by the 1.000 s lockpick asked for (its library names no lease: a session or watchdog it keeps may have lasted longer, unseen here) and process 1 was granted the lock at 1.200 s; process 0 wrote at 1.510 s, 0.410 s after the lease asked for ran out: "
        ),
        "{}",
        d.summary
    );
}
