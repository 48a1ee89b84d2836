//! The checks a run gets: the lock model chosen for the history, and linearizability against
//! it merged with the lock checks.

use lockpick_checker::history::{Event, EventKind, Process, Value, F, FORMAT_VERSION};
use lockpick_checker::lock::{lock_model_for, LockCheckParams, Property};
use lockpick_checker::run_checks::check_run;
use lockpick_checker::verdict::Verdict;

const MS: u64 = 1_000_000;

/// One row: (ms, process, type, f, token, lease_ms).
type Row = (u64, u64, EventKind, F, Option<u64>, Option<u64>);

/// Builds a lock history from rows.
fn history(rows: &[Row]) -> Vec<Event> {
    rows.iter()
        .enumerate()
        .map(|(i, &(ms, p, kind, f, token, lease_ms))| Event {
            v: FORMAT_VERSION,
            index: i as u64,
            time_ns: ms * MS,
            process: Process::Client(p),
            kind,
            f,
            lock: Some("l".into()),
            value: Value {
                token,
                lease_ms,
                holder: (f == F::Acquire && kind == EventKind::Ok).then(|| format!("h{p}")),
                ..Value::default()
            },
            error: None,
        })
        .collect()
}

use EventKind::{Invoke, Ok};
use F::{Acquire, Release};

fn params(property: Property) -> LockCheckParams {
    LockCheckParams {
        property,
        deadlock_ms: 0,
    }
}

/// Process 0 holds a 1 s lease and never lets go; process 1 is granted the lock 0.1 s later.
fn takeover_before_the_lease_ran_out() -> Vec<Event> {
    history(&[
        (0, 0, Invoke, Acquire, None, Some(1000)),
        (5, 0, Ok, Acquire, Some(1), Some(1000)),
        (100, 1, Invoke, Acquire, None, Some(1000)),
        (110, 1, Ok, Acquire, Some(2), Some(1000)),
        (120, 1, Invoke, Release, None, None),
        (125, 1, Ok, Release, None, None),
    ])
}

#[test]
fn takeover_before_the_lease_ran_out_is_not_linearizable_against_the_lease_model() {
    let events = takeover_before_the_lease_ran_out();
    assert_eq!(
        lock_model_for(&events, Property::Exclusive).map(|m| m.name()),
        Some("lease")
    );
    let checks = check_run(&events, &params(Property::Exclusive));
    let lin = checks.linearizability.as_ref().unwrap();
    assert_eq!(lin.model, "lease");
    assert_eq!(lin.verdict, Verdict::Invalid);
    assert!(lin.explanation.is_some());
    // Certain from the return of process 1's grant: the prefix that ends there has two
    // holders of one lease.
    assert_eq!(lin.violated_at_ns, Some(110 * MS));
    assert_eq!(checks.verdict(), Verdict::Invalid);
}

#[test]
fn under_fenced_a_lease_the_lock_broke_is_an_observation_not_a_violation() {
    // The same takeover before the lease ran out, writes with rising tokens accepted: under
    // `fenced` only the resource counts, so the lease model's finding does not make it
    // invalid (it is still reported); under `exclusive` it does.
    let events = takeover_before_the_lease_ran_out();
    let fenced = check_run(&events, &params(Property::Fenced));
    let lin = fenced
        .linearizability
        .as_ref()
        .expect("the lease model fits");
    assert_eq!(lin.verdict, Verdict::Invalid, "still found and reported");
    assert_eq!(fenced.verdict(), Verdict::Valid);
    let exclusive = check_run(&events, &params(Property::Exclusive));
    assert_eq!(exclusive.verdict(), Verdict::Invalid);
}

#[test]
fn a_soaks_check_under_fenced_keeps_the_streams_finding_without_searching_a_second_reading() {
    // A soak's history is checked as it grows, and under `fenced` a lock the stream found
    // violated is not searched again (the search cannot change the verdict, and over an hour's
    // history it took 1.2 GiB): the finding stands, unexplained, and says why. A run's file
    // checked on its own is searched and explained as before.
    use lockpick_checker::exposure::Plan;
    use lockpick_checker::history::HistoryReader;
    use lockpick_checker::run_checks::{check_growing_run_file, check_run_file};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.jsonl");
    let lines: String = (takeover_before_the_lease_ran_out().iter())
        .map(|e| serde_json::to_string(e).unwrap() + "\n")
        .collect();
    std::fs::write(&path, lines).unwrap();
    let fenced = params(Property::Fenced);

    let reader = HistoryReader::open(&path).unwrap();
    let soak = check_growing_run_file(reader, &path, &fenced, Plan::none()).unwrap();
    let lin = soak
        .checks
        .linearizability
        .as_ref()
        .expect("the lease model fits");
    assert_eq!(lin.verdict, Verdict::Invalid, "{lin:?}");
    let said = lin.explanation.as_deref().unwrap();
    assert!(
        said.contains("no linearization of lock(s) l' operations exists (found as the history streamed; unexplained: not searched from a second reading: under `fenced`"),
        "{said}"
    );
    assert_eq!(lin.violated_at_ns, None);
    assert_eq!(lin.ops, 3, "{lin:?}");

    let run = check_run_file(&path, &fenced).unwrap();
    let lin = run.checks.linearizability.as_ref().unwrap();
    assert_eq!(lin.verdict, Verdict::Invalid);
    assert!(
        lin.violated_at_ns.is_some(),
        "searched and narrowed down: {lin:?}"
    );
    assert!(!lin.explanation.as_deref().unwrap().contains("unexplained"));

    // Under `exclusive` the soak's check searches as any run's does: there it decides.
    let exclusive = params(Property::Exclusive);
    let reader = HistoryReader::open(&path).unwrap();
    let soak = check_growing_run_file(reader, &path, &exclusive, Plan::none()).unwrap();
    assert!(soak
        .checks
        .linearizability
        .unwrap()
        .violated_at_ns
        .is_some());
}

#[test]
fn takeover_after_the_lease_ran_out_is_linearizable() {
    let events = history(&[
        (0, 0, Invoke, Acquire, None, Some(1000)),
        (5, 0, Ok, Acquire, Some(1), Some(1000)),
        (1200, 1, Invoke, Acquire, None, Some(1000)),
        (1210, 1, Ok, Acquire, Some(2), Some(1000)),
        (1220, 1, Invoke, Release, None, None),
        (1225, 1, Ok, Release, None, None),
    ]);
    let checks = check_run(&events, &params(Property::Exclusive));
    assert_eq!(
        checks.linearizability.as_ref().unwrap().verdict,
        Verdict::Valid,
        "{checks:?}"
    );
    assert_eq!(
        checks.linearizability.as_ref().unwrap().violated_at_ns,
        None
    );
    assert_eq!(checks.verdict(), Verdict::Valid, "{checks:?}");
}

#[test]
fn a_library_that_claims_no_lease_is_still_checked_against_the_lease_it_was_asked_for() {
    // python-redis-lock x partition: the adapter asks for 1 s and the library says nothing of
    // the lease (grants with lease_ms null). Process 0's release hangs through a cut, its key
    // expires, process 1 takes the lock after the 1 s; process 0's release then fails
    // not-owner. Against a mutex that never expires that grant would be impossible.
    let events = history(&[
        (0, 0, Invoke, Acquire, None, Some(1000)),
        (5, 0, Ok, Acquire, None, None),
        (10, 0, Invoke, Release, None, None),
        (1100, 1, Invoke, Acquire, None, Some(1000)),
        (1110, 1, Ok, Acquire, None, None),
        (1120, 1, Invoke, Release, None, None),
        (1125, 1, Ok, Release, None, None),
        (2000, 0, EventKind::Fail, Release, None, None),
    ]);
    assert_eq!(
        lock_model_for(&events, Property::Exclusive).map(|m| m.name()),
        Some("lease")
    );
    let checks = check_run(&events, &params(Property::Exclusive));
    assert_eq!(
        checks.linearizability.as_ref().unwrap().verdict,
        Verdict::Valid,
        "{checks:?}"
    );
    // The same grant inside the asked-for second is the lock breaking.
    let events = history(&[
        (0, 0, Invoke, Acquire, None, Some(1000)),
        (5, 0, Ok, Acquire, None, None),
        (100, 1, Invoke, Acquire, None, Some(1000)),
        (110, 1, Ok, Acquire, None, None),
    ]);
    let checks = check_run(&events, &params(Property::Exclusive));
    assert_eq!(
        checks.linearizability.as_ref().unwrap().verdict,
        Verdict::Invalid,
        "{checks:?}"
    );
    // A lock asked for no lease at all (SETNX/DEL) is a mutex.
    let events = history(&[
        (0, 0, Invoke, Acquire, None, None),
        (5, 0, Ok, Acquire, None, None),
    ]);
    assert_eq!(
        lock_model_for(&events, Property::Exclusive).map(|m| m.name()),
        Some("mutex")
    );
}

#[test]
fn a_lease_expiry_takeover_under_fenced_is_linearizable_against_the_lease_model() {
    // The GC-pause shape: process 0's lease runs out while it is paused, process 1 takes over.
    let events = history(&[
        (0, 0, Invoke, Acquire, None, Some(300)),
        (5, 0, Ok, Acquire, Some(1), Some(300)),
        (400, 1, Invoke, Acquire, None, Some(300)),
        (410, 1, Ok, Acquire, Some(2), Some(300)),
        (420, 1, Invoke, Release, None, None),
        (425, 1, Ok, Release, None, None),
        (900, 0, Invoke, Release, None, None),
        (905, 0, EventKind::Fail, Release, None, None),
    ]);
    assert_eq!(
        lock_model_for(&events, Property::Fenced).map(|m| m.name()),
        Some("lease")
    );
    let checks = check_run(&events, &params(Property::Fenced));
    assert_eq!(
        checks.linearizability.as_ref().unwrap().verdict,
        Verdict::Valid
    );
}

#[test]
fn a_fenced_lock_without_leases_has_no_fitting_model() {
    let events = history(&[
        (0, 0, Invoke, Acquire, None, None),
        (5, 0, Ok, Acquire, Some(5), None),
    ]);
    assert_eq!(lock_model_for(&events, Property::Fenced), None);
    assert!(check_run(&events, &params(Property::Fenced))
        .linearizability
        .is_none());
}

#[test]
fn no_lease_under_exclusive_is_checked_as_a_plain_mutex() {
    let events = history(&[
        (0, 0, Invoke, Acquire, None, None),
        (5, 0, Ok, Acquire, None, None),
        (10, 0, Invoke, Release, None, None),
        (15, 0, Ok, Release, None, None),
    ]);
    assert_eq!(
        lock_model_for(&events, Property::Exclusive).map(|m| m.name()),
        Some("mutex")
    );
    assert_eq!(
        check_run(&events, &params(Property::Exclusive)).verdict(),
        Verdict::Valid
    );
}

#[test]
fn a_session_lock_killed_with_its_holder_may_be_granted_again_and_a_live_holders_may_not() {
    // Process 2 holds a lock without a lease (PostgreSQL's, MariaDB's session locks) and is
    // killed (`client-crash`); the server ends its session and process 0 is granted the lock
    // 1 ms later. The kill lets the dead holder's lock go (at some point after it), so the
    // history is linearizable against `mutex`, as the lock checks find it safe. Without the
    // kill the same grant is a second owner.
    let rows = [
        (0, 2, Invoke, Acquire, None, None),
        (5, 2, Ok, Acquire, None, None),
        (6, 0, Invoke, Acquire, None, None),
        (1328, 0, Ok, Acquire, None, None),
        (1400, 0, Invoke, Release, None, None),
        (1405, 0, Ok, Release, None, None),
    ];
    let mut killed = history(&rows);
    let mut kill = pause_event(1327, F::Crash, 2);
    kill.index = 3;
    killed.insert(3, kill);
    for (i, e) in killed.iter_mut().enumerate() {
        e.index = i as u64;
    }
    let checks = check_run(&killed, &params(Property::Exclusive));
    let lin = checks.linearizability.as_ref().unwrap();
    assert_eq!((lin.model.as_str(), lin.verdict), ("mutex", Verdict::Valid));
    assert_eq!(checks.verdict(), Verdict::Valid);
    let alive = check_run(&history(&rows), &params(Property::Exclusive));
    let lin = alive.linearizability.as_ref().unwrap();
    assert_eq!(
        (lin.model.as_str(), lin.verdict),
        ("mutex", Verdict::Invalid)
    );
}

#[test]
fn a_renewal_without_a_length_renews_for_the_lease_its_holder_asked_for_as_the_history_streams() {
    // The streaming check reads a renewal as the search does (`lin_locks.rs` has the search's
    // side): process 0 renews without a length at 0.8 s, so its lease holds to 1.8 s.
    let granted_at = |at: u64| {
        history(&[
            (0, 0, Invoke, Acquire, None, Some(1000)),
            (5, 0, Ok, Acquire, Some(1), Some(1000)),
            (800, 0, Invoke, F::Renew, None, None),
            (805, 0, Ok, F::Renew, None, None),
            (at, 1, Invoke, Acquire, None, Some(1000)),
            (at + 5, 1, Ok, Acquire, Some(2), Some(1000)),
        ])
    };
    let lin_of = |at: u64| {
        let checks = check_run(&granted_at(at), &params(Property::Exclusive));
        let lin = checks.linearizability.unwrap();
        (lin.model, lin.verdict)
    };
    assert_eq!(lin_of(1900), ("lease".to_owned(), Verdict::Valid));
    assert_eq!(lin_of(1500), ("lease".to_owned(), Verdict::Invalid));
}

#[test]
fn a_retired_process_lets_its_session_locks_go_and_a_live_one_does_not() {
    // PostgreSQL ended process 2's idle session while it held a session lock: its release
    // failed, then its next acquire had an unknown outcome, which retires the process (its
    // client drops the session). Process 7 is granted the lock after. Without the
    // retirement, process 2 still holds it and the grant is a second owner.
    let rows = |last: EventKind| {
        [
            (0, 2, Invoke, Acquire, None, None),
            (5, 2, Ok, Acquire, None, None),
            (10, 2, Invoke, Release, None, None),
            (1000, 2, EventKind::Fail, Release, None, None),
            (1010, 2, Invoke, Acquire, None, None),
            (1011, 2, last, Acquire, None, None),
            (1050, 7, Invoke, Acquire, None, None),
            (1055, 7, Ok, Acquire, None, None),
        ]
    };
    let lin_of = |last: EventKind| {
        let checks = check_run(&history(&rows(last)), &params(Property::Exclusive));
        let lin = checks.linearizability.unwrap();
        (lin.model, lin.verdict)
    };
    assert_eq!(
        lin_of(EventKind::Info),
        ("mutex".to_owned(), Verdict::Valid)
    );
    assert_eq!(
        lin_of(EventKind::Fail),
        ("mutex".to_owned(), Verdict::Invalid)
    );
}

#[test]
fn a_lease_near_u64_max_is_checked_not_overflowed() {
    // rslock 0.2.2's validity wraps to near 2^64 when a try outlasts its TTL, and its adapter
    // reports it as the grant's lease: every lease end saturates (a debug build panicked on
    // the multiplication, a release one wrapped to a lease end in the past).
    let endless = u64::MAX - 35;
    let events = history(&[
        (0, 0, Invoke, Acquire, None, Some(1000)),
        (1100, 0, Ok, Acquire, None, Some(endless)),
        (1150, 1, Invoke, Acquire, None, Some(1000)),
        (1160, 1, Ok, Acquire, None, Some(1000)),
        (1300, 0, Invoke, Release, None, None),
        (1305, 0, Ok, Release, None, None),
    ]);
    let checks = check_run(&events, &params(Property::Exclusive));
    assert_eq!(checks.verdict(), Verdict::Invalid);
    assert_eq!(
        checks.linearizability.map(|l| (l.model, l.verdict)),
        Some(("lease".to_owned(), Verdict::Invalid))
    );
}

/// A nemesis event pausing (`F::Pause`) or resuming (`F::Resume`) client `client`.
fn pause_event(ms: u64, f: F, client: u64) -> Event {
    Event {
        v: FORMAT_VERSION,
        index: 0,
        time_ns: ms * MS,
        process: Process::Nemesis,
        kind: EventKind::Info,
        f,
        lock: None,
        value: Value {
            client: Some(client),
            ..Value::default()
        },
        error: None,
    }
}

/// Checks `events` as a run of a client-pause scenario, one event at a time.
fn check_paused_run(events: &[Event]) -> lockpick_checker::run_checks::RunChecks {
    use lockpick_checker::exposure::{FaultRule, Plan, Rule};
    use lockpick_checker::fault_verbs::Target;
    use lockpick_checker::run_checks::RunStream;
    let plan = Plan {
        faults: vec![FaultRule {
            verb: F::Pause,
            target: Target::Client,
            rule: Rule::PauseOutlastsLease,
        }],
        ..Plan::default()
    };
    let mut stream = RunStream::with_exposure(&params(Property::Exclusive), plan);
    for e in events {
        stream.push(&e.as_ref());
    }
    stream.finish()
}

#[test]
fn a_clean_run_whose_pause_could_not_outlast_the_lease_is_not_exposed_never_valid() {
    // etcd grants 1000 ms; process 0 is stopped for 900 ms while holding, and process 1 gets
    // the lock only after the holder let go: no violation, and none was possible.
    let mut events = history(&[
        (0, 0, Invoke, Acquire, None, Some(1000)),
        (5, 0, Ok, Acquire, Some(1), Some(1000)),
        (50, 1, Invoke, Acquire, None, Some(1000)),
        (960, 0, Invoke, Release, None, None),
        (965, 0, Ok, Release, None, None),
        (970, 1, Ok, Acquire, Some(2), Some(1000)),
        (980, 1, Invoke, Release, None, None),
        (985, 1, Ok, Release, None, None),
    ]);
    events.insert(2, pause_event(10, F::Pause, 0));
    events.insert(4, pause_event(910, F::Resume, 0));
    let checks = check_paused_run(&events);
    assert_eq!(checks.lock.verdict, Verdict::Valid);
    assert_eq!(checks.verdict(), Verdict::NotExposed);
    assert_eq!(
        checks.not_exposed().as_deref(),
        Some("pause of client 0 at 0.010 s–0.910 s: the pause ended 905 ms after client 0's lease began, within its 1000 ms lease")
    );
    // The same history checked without its faults stays valid: exposure is the run's.
    assert_eq!(
        check_run(&events, &params(Property::Exclusive)).verdict(),
        Verdict::Valid
    );
}

#[test]
fn a_violation_counts_even_when_the_pause_fell_short() {
    // A takeover before the lease ran out is a violation, whatever the pause's size.
    let mut events = history(&[
        (0, 0, Invoke, Acquire, None, Some(1000)),
        (5, 0, Ok, Acquire, Some(1), Some(1000)),
        (100, 1, Invoke, Acquire, None, Some(1000)),
        (110, 1, Ok, Acquire, Some(2), Some(1000)),
        (120, 1, Invoke, Release, None, None),
        (125, 1, Ok, Release, None, None),
    ]);
    events.insert(2, pause_event(10, F::Pause, 0));
    events.push(pause_event(200, F::Resume, 0));
    let checks = check_paused_run(&events);
    assert!(checks.not_exposed().is_some());
    assert_eq!(checks.verdict(), Verdict::Invalid);
}
