//! The server's own record beside the holders' beliefs, on hand-built histories and server
//! records: a silent loss by expiry (and none when the library said `lost` first), by another
//! process's overwrite, by a majority of Redlock's five nodes (two of five lost is none), by a
//! node's reset; a silent re-take; a value no process can be given (no finding, and the view
//! says why); and the verdict the same with the record as without.

use lockpick_checker::history::{Event, EventKind, Process, Value, F, FORMAT_VERSION};
use lockpick_checker::lock::{
    check_locks, check_locks_with_server, Finding, FindingKind, LockCheckParams, LockReport,
    Property, RecordEnd,
};
use lockpick_checker::run_checks::check_run_file_with_server;
use lockpick_checker::server_record::{
    read_server_record_in, RecordChange, ServerEvent, SERVER_RECORD_VERSION,
};
use lockpick_checker::verdict::Verdict;

const MS: u64 = 1_000_000;

/// History events given in any order, ordered by time (ties keep insertion order) and
/// numbered by [`H::build`]; times in milliseconds, every client operation on lock "l".
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

    /// An acquire granted with a 300 ms lease; `holder` is the value the history names.
    fn acquire(&mut self, p: u64, at: (u64, u64), token: u64, holder: Option<&str>) -> &mut H {
        let args = Value {
            lease_ms: Some(300),
            holder: holder.map(str::to_owned),
            ..Value::default()
        };
        let result = Value {
            token: Some(token),
            ..args.clone()
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

    fn notice(&mut self, p: u64, ms: u64, event: &str) -> &mut H {
        let v = Value {
            event: Some(event.to_owned()),
            ..Value::default()
        };
        self.event(ms, Process::Client(p), EventKind::Info, F::Notice, v)
    }

    /// Client `c` stopped from `from` to `to` (a GC pause).
    fn pause(&mut self, c: u64, (from, to): (u64, u64)) -> &mut H {
        let pause = Value {
            client: Some(c),
            point: Some("before-write".into()),
            ms: Some(to - from),
            ..Value::default()
        };
        let resume = Value {
            client: Some(c),
            ..Value::default()
        };
        self.event(from, Process::Nemesis, EventKind::Info, F::Pause, pause);
        self.event(to, Process::Nemesis, EventKind::Info, F::Resume, resume)
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

/// Server events, numbered in the order given (times must not decrease); key `lockpick:l`.
#[derive(Default)]
struct S(Vec<ServerEvent>);

impl S {
    fn at(&mut self, ms: u64, node: &str, event: RecordChange, value: Option<&str>) -> &mut S {
        let key = if event == RecordChange::Reset {
            "*"
        } else {
            "lockpick:l"
        };
        self.0.push(ServerEvent {
            v: SERVER_RECORD_VERSION,
            index: self.0.len() as u64,
            time_ns: ms * MS,
            node: node.to_owned(),
            key: key.to_owned(),
            event,
            value: value.map(str::to_owned),
            ttl_ms: (event == RecordChange::Set).then_some(300),
        });
        self
    }

    fn set(&mut self, ms: u64, node: &str, value: &str) -> &mut S {
        self.at(ms, node, RecordChange::Set, Some(value))
    }
}

const PARAMS: LockCheckParams = LockCheckParams {
    property: Property::Exclusive,
    deadlock_ms: 0,
};

/// The report with the server record, checked against the one without: the same verdict,
/// violations (but for what a double holder's sentence adds of the record) and unknowns
/// (the server's findings are observations only).
fn check(events: &[Event], server: &[ServerEvent]) -> LockReport {
    let without = check_locks(events, &PARAMS);
    let with = check_locks_with_server(events, &PARAMS, server);
    assert_eq!(with.verdict, without.verdict, "{with}");
    let unsaid = |fs: &[Finding]| -> Vec<Finding> {
        (fs.iter())
            .map(|f| {
                let mut f = f.clone();
                if let Some((head, _)) = f.summary.split_once("; the server's record of") {
                    f.summary = head.to_owned();
                    f.server_indices.clear();
                }
                f
            })
            .collect()
    };
    assert_eq!(unsaid(&with.violations), without.violations, "{with}");
    assert_eq!(with.violation_counts, without.violation_counts, "{with}");
    assert_eq!(with.unknowns, without.unknowns, "{with}");
    assert!(without.server.is_none());
    assert!(with.server.is_some());
    assert!(
        with.observations.iter().all(|f| f.kind.is_observation()),
        "{with}"
    );
    with
}

fn of(r: &LockReport, kind: FindingKind) -> Vec<&Finding> {
    r.observations.iter().filter(|f| f.kind == kind).collect()
}

/// Process 0 takes the lock at 5 ms, is paused from 10 to 600 ms past its 300 ms lease,
/// writes at 610 ms and releases at 620 ms; nobody else asks.
fn paused_holder(holder: Option<&str>) -> H {
    let mut h = H::default();
    h.acquire(0, (0, 5), 1, holder)
        .pause(0, (10, 600))
        .write(0, (610, 612), 1)
        .simple(0, F::Release, (620, 622));
    h
}

#[test]
fn a_paused_holder_whose_record_expired_unannounced_lost_it_silently() {
    let events = paused_holder(None).build();
    // The library's own value, which the history does not name: it is process 0's because
    // only its acquire was open when it was set.
    let server = S::default()
        .set(3, "n1", "redis-v1")
        .at(380, "n1", RecordChange::Expired, None)
        .0
        .clone();
    let r = check(&events, &server);
    assert_eq!(r.verdict, Verdict::Valid, "{r}");
    let losses = of(&r, FindingKind::SilentLoss);
    assert_eq!(losses.len(), 1, "{r}");
    let f = losses[0];
    let s = &f.summary;
    for part in [
        "process 0 held lock \"l\" (acquired #1 at 0.005 s, token 1)",
        "on n1 (\"lockpick:l\", set at 0.003 s, server record #0) it expired at 0.303 s",
        "the server showed it at 0.380 s, server record #1",
        "went on believing it held the lock for 0.317 s, until it invoked release at 0.620 s",
        "made 1 write(s) meanwhile (#4)",
        "its library never told it (no `lost` or `suspended` notice)",
        "faults active: pause of client 0",
    ] {
        assert!(s.contains(part), "{part:?} not in {s}");
    }
    assert_eq!(f.processes, vec![0]);
    assert_eq!(f.tokens, vec![1]);
    assert_eq!(f.server_indices, vec![0, 1]);
    assert_eq!(f.indices, vec![1, 4, 6]);
    let w = f.window.expect("a window");
    assert_eq!((w.start_ns, w.end_ns), (303 * MS, 620 * MS));
    let view = r.server.as_ref().unwrap();
    let l = &view.locks[0];
    assert_eq!(
        (l.lock.as_str(), l.nodes.as_slice(), l.majority),
        ("l", &["n1".to_string()][..], 1)
    );
    assert_eq!(
        (l.silent_losses, l.silent_retakes, l.holdings_judged),
        (1, 0, 1)
    );
    let rec = &l.records[0];
    assert_eq!(rec.process, Some(0));
    assert_eq!(rec.ended, Some(RecordEnd::Expired));
    assert_eq!(
        (rec.end_ns, rec.observed_end_ns),
        (Some(303 * MS), Some(380 * MS))
    );
    assert!(r.to_string().contains("observed: 1 silent-loss"), "{r}");
    assert!(
        r.to_string()
            .contains("server record, lock \"l\": 1 node(s) (1 a majority), 1 holding(s) judged"),
        "{r}"
    );
}

/// As a MariaDB watcher's reading showed it (mysql-lease-row-baseline, no fault): its read
/// began before process 0's release of value 0-a and came back after process 0 asked again,
/// with 0-b, so 0-a's record is stamped inside the second holding's acquire and gone at the
/// next reading; 0-b's own record comes at the reading after. 0-a is named by the history as
/// the first holding's value: it says nothing of the second.
#[test]
fn a_late_reading_of_the_holding_before_is_no_silent_loss_of_the_next() {
    let mut h = H::default();
    h.acquire(0, (0, 2), 1, Some("0-a"))
        .simple(0, F::Release, (10, 11))
        .acquire(0, (12, 30), 2, Some("0-b"))
        .write(0, (31, 32), 2)
        .simple(0, F::Release, (60, 61));
    let server = S::default()
        .set(1, "n1", "0-a")
        .at(11, "n1", RecordChange::Deleted, None)
        .set(14, "n1", "0-a")
        .at(20, "n1", RecordChange::Deleted, None)
        .set(25, "n1", "0-b")
        .at(62, "n1", RecordChange::Deleted, None)
        .0
        .clone();
    let r = check(&h.build(), &server);
    assert!(
        of(&r, FindingKind::SilentLoss).is_empty(),
        "{r} {:?}",
        of(&r, FindingKind::SilentLoss)
            .iter()
            .map(|f| &f.summary)
            .collect::<Vec<_>>()
    );
    assert_eq!(
        r.server.as_ref().unwrap().locks[0].holdings_judged,
        2,
        "{r}"
    );
    // The same record with 0-b's lost for good: that is a silent loss of the second holding.
    let server = S::default()
        .set(1, "n1", "0-a")
        .at(11, "n1", RecordChange::Deleted, None)
        .set(25, "n1", "0-b")
        .at(28, "n1", RecordChange::Deleted, None)
        .0
        .clone();
    let r = check(&h.build(), &server);
    let losses = of(&r, FindingKind::SilentLoss);
    assert_eq!(losses.len(), 1, "{r}");
    assert_eq!(losses[0].tokens, vec![2], "{r}");
}

#[test]
fn a_lost_notice_before_the_next_write_is_no_silent_loss() {
    let mut h = paused_holder(Some("0-a"));
    h.notice(0, 601, "lost");
    let server = S::default()
        .set(3, "n1", "0-a")
        .at(380, "n1", RecordChange::Expired, None)
        .0
        .clone();
    let r = check(&h.build(), &server);
    assert!(of(&r, FindingKind::SilentLoss).is_empty(), "{r}");
    assert_eq!(r.server.as_ref().unwrap().locks[0].holdings_judged, 1);
    // A `reconnected` says nothing of a loss: still silent.
    let mut h = paused_holder(Some("0-a"));
    h.notice(0, 601, "reconnected");
    let r = check(&h.build(), &server);
    assert_eq!(of(&r, FindingKind::SilentLoss).len(), 1, "{r}");
}

#[test]
fn another_process_s_value_over_the_record_is_a_silent_loss_beside_the_double_holder() {
    let mut h = paused_holder(Some("0-a"));
    h.acquire(1, (200, 210), 2, Some("1-b"))
        .simple(1, F::Release, (300, 302));
    let events = h.build();
    let server = S::default()
        .set(3, "n1", "0-a")
        .set(205, "n1", "1-b")
        .at(301, "n1", RecordChange::Deleted, None)
        .0
        .clone();
    let r = check(&events, &server);
    // The double holder is the violation, as without the record.
    assert_eq!(r.verdict, Verdict::Invalid, "{r}");
    let losses = of(&r, FindingKind::SilentLoss);
    assert_eq!(losses.len(), 1, "{r}");
    let s = &losses[0].summary;
    assert!(
        s.contains("it was overwritten by process 1's value at 0.205 s (server record #1)"),
        "{s}"
    );
    assert_eq!(losses[0].processes, vec![0, 1]);
    // The double holder's explanation sets the server's record of the earlier holder beside it.
    let doubles = (r.violations.iter())
        .filter(|f| f.kind == FindingKind::DoubleHolder)
        .collect::<Vec<_>>();
    assert_eq!(doubles.len(), 1, "{r}");
    assert!(
        doubles[0].summary.ends_with(
            "; the server's record of process 0's value at process 1's grant: overwritten by process 1's on n1 at 0.205 s"
        ),
        "{}",
        doubles[0].summary
    );
    let rec = &r.server.as_ref().unwrap().locks[0].records;
    assert_eq!(rec[0].overwritten_by, Some(1));
    assert_eq!(rec[1].process, Some(1));
    assert_eq!(rec[1].ended, Some(RecordEnd::Deleted));
}

#[test]
fn a_double_holders_explanation_says_where_the_server_lost_the_earlier_holders_value_and_where_it_kept_it(
) {
    // Process 0 is paused past its lease; its value expires on n1 (at its TTL's end, 0.303 s,
    // though the watcher saw it at 0.380 s) but n2 never lets it go; process 1 is granted at
    // 0.410 s. The history says only that process 0's lease ran out; the server's record says
    // on which node it really did.
    let mut h = paused_holder(Some("0-a"));
    h.acquire(1, (400, 410), 2, Some("1-b"))
        .simple(1, F::Release, (500, 502));
    let server = S::default()
        .set(3, "n1", "0-a")
        .set(3, "n2", "0-a")
        .at(380, "n1", RecordChange::Expired, None)
        .set(405, "n1", "1-b")
        .at(501, "n1", RecordChange::Deleted, None)
        .0
        .clone();
    let r = check(&h.build(), &server);
    assert_eq!(r.verdict, Verdict::Invalid, "{r}");
    let double = (r.violations.iter())
        .find(|f| f.kind == FindingKind::DoubleHolder)
        .expect("a double holder");
    let s = &double.summary;
    assert!(
        s.starts_with(
            "process 0's lease ran out at 0.305 s and process 1 was granted the lock at 0.410 s"
        ),
        "{s}"
    );
    assert!(
        s.ends_with(
            "; the server's record of process 0's value at process 1's grant: expired on n1 at 0.303 s, still held on n2"
        ),
        "{s}"
    );
    // Its evidence: the lines that set the value on n1 and n2, and n1's expiry.
    assert_eq!(double.server_indices, vec![0, 1, 2], "{double:?}");
    // Without the record, the same history says nothing of the server.
    let r = check(&h.build(), &[]);
    let double = (r.violations.iter())
        .find(|f| f.kind == FindingKind::DoubleHolder)
        .unwrap();
    assert!(
        !double.summary.contains("server's record"),
        "{}",
        double.summary
    );
}

/// Process 0's value on five nodes from 3 ms; the nodes in `lost` lose it at 100, 150, 200 ms.
fn redlock(lost: &[&str]) -> Vec<ServerEvent> {
    let mut s = S::default();
    for n in ["n1", "n2", "n3", "n4", "n5"] {
        s.set(3, n, "0-a");
    }
    for (n, ms) in lost.iter().zip([100, 150, 200]) {
        s.at(ms, n, RecordChange::Deleted, None);
    }
    s.0
}

#[test]
fn redlock_losing_two_of_five_nodes_keeps_a_majority_and_losing_three_does_not() {
    let events = paused_holder(Some("0-a")).build();
    let r = check(&events, &redlock(&["n1", "n2"]));
    assert!(of(&r, FindingKind::SilentLoss).is_empty(), "{r}");
    let l = &r.server.as_ref().unwrap().locks[0];
    assert_eq!((l.nodes.len(), l.majority), (5, 3));
    let r = check(&events, &redlock(&["n1", "n2", "n3"]));
    let losses = of(&r, FindingKind::SilentLoss);
    assert_eq!(losses.len(), 1, "{r}");
    let s = &losses[0].summary;
    assert!(
        s.contains("its value was on fewer than 3 of the lock's 5 nodes from 0.200 s: on n1"),
        "{s}"
    );
    for part in [
        "on n1 (\"lockpick:l\", set at 0.003 s, server record #0) it was deleted at 0.100 s",
        "on n2 (\"lockpick:l\", set at 0.003 s, server record #1) it was deleted at 0.150 s",
        "on n3 (\"lockpick:l\", set at 0.003 s, server record #2) it was deleted at 0.200 s",
    ] {
        assert!(s.contains(part), "{part:?} not in {s}");
    }
    assert_eq!(losses[0].window.unwrap().start_ns, 200 * MS);
}

#[test]
fn a_node_that_lost_every_record_lost_the_holder_s_lock() {
    let events = paused_holder(Some("0-a")).build();
    let server = S::default()
        .set(3, "n1", "0-a")
        .at(250, "n1", RecordChange::Reset, None)
        .0
        .clone();
    let r = check(&events, &server);
    let losses = of(&r, FindingKind::SilentLoss);
    assert_eq!(losses.len(), 1, "{r}");
    assert!(
        losses[0]
            .summary
            .contains("the node lost every record (reset) at 0.250 s (server record #1)"),
        "{}",
        losses[0].summary
    );
}

#[test]
fn a_renewal_that_set_the_expired_value_again_is_a_silent_retake() {
    let mut h = H::default();
    h.acquire(0, (0, 5), 1, Some("0-a"))
        .simple(0, F::Renew, (390, 395))
        .write(0, (400, 402), 1)
        .simple(0, F::Release, (500, 502));
    let events = h.build();
    let server = S::default()
        .set(3, "n1", "0-a")
        .at(310, "n1", RecordChange::Expired, None)
        .set(392, "n1", "0-a")
        .at(501, "n1", RecordChange::Deleted, None)
        .0
        .clone();
    let r = check(&events, &server);
    assert_eq!(r.verdict, Verdict::Valid, "{r}");
    let retakes = of(&r, FindingKind::SilentRetake);
    assert_eq!(retakes.len(), 1, "{r}");
    let f = retakes[0];
    for part in [
        "on n1 the record \"lockpick:l\" of process 0's value \"0-a\" (lock \"l\", acquired #1 at 0.005 s, token 1): it expired at 0.303 s",
        "and it was set again with the same value at 0.392 s (server record #2) by its renewal invoked at 0.390 s (#2); process 0 held on throughout",
        "never told it",
    ] {
        assert!(f.summary.contains(part), "{part:?} not in {}", f.summary);
    }
    assert_eq!(f.server_indices, vec![0, 1, 2]);
    assert_eq!(f.indices, vec![1, 2]);
    // The gap itself was lived through unannounced: a silent loss too, and back at 0.392 s.
    let losses = of(&r, FindingKind::SilentLoss);
    assert_eq!(losses.len(), 1, "{r}");
    assert!(
        losses[0]
            .summary
            .contains("it went on believing it held the lock for 0.089 s without it, until its value was back on a majority at 0.392 s"),
        "{}",
        losses[0].summary
    );
    let l = &r.server.as_ref().unwrap().locks[0];
    assert_eq!((l.silent_losses, l.silent_retakes), (1, 1));
}

/// Process 0 granted at 5 ms (its adapter naming `owner`, if given, as what its library
/// stores) while process 1's acquire is open from 1 to 50 ms, then paused past its lease; the
/// server sets "lib-x" at 4 ms and expires it at 380 ms.
fn contended(owner: Option<&str>) -> (Vec<Event>, Vec<ServerEvent>) {
    let granted = Value {
        token: Some(1),
        lease_ms: Some(300),
        owner: owner.map(str::to_owned),
        ..Value::default()
    };
    let mut h = H::default();
    h.op(0, F::Acquire, (0, 5), Value::default(), granted)
        .event(
            1,
            Process::Client(1),
            EventKind::Invoke,
            F::Acquire,
            Value::default(),
        )
        .event(
            50,
            Process::Client(1),
            EventKind::Fail,
            F::Acquire,
            Value::default(),
        )
        .pause(0, (10, 600))
        .write(0, (610, 612), 1)
        .simple(0, F::Release, (620, 622));
    let server = S::default()
        .set(4, "n1", "lib-x")
        .at(380, "n1", RecordChange::Expired, None)
        .0
        .clone();
    (h.build(), server)
}

#[test]
fn a_value_set_while_two_acquires_were_open_is_nobody_s_and_the_view_says_so() {
    let (events, server) = contended(None);
    let r = check(&events, &server);
    assert!(r.observations.is_empty(), "{r}");
    let view = r.server.as_ref().unwrap();
    let l = &view.locks[0];
    assert_eq!((l.unattributed_values, l.holdings_not_judged), (1, 1));
    assert_eq!(l.records[0].process, None);
    assert!(
        view.notes.iter().any(|n| n.contains(
            "lock \"l\": the value \"lib-x\" is attributed to no process: it was first set at 0.004 s on n1 (server record #0) while processes 0 and 1 all had an acquire or renewal of the lock open"
        )),
        "{:?}",
        view.notes
    );
    assert!(
        view.notes
            .iter()
            .any(|n| n.starts_with("lock \"l\": 1 of 1 holding(s) not judged")),
        "{:?}",
        view.notes
    );
}

#[test]
fn a_run_folder_s_server_record_is_read_beside_its_history_and_absent_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let events = paused_holder(Some("0-a")).build();
    let history: String = events
        .iter()
        .map(|e| serde_json::to_string(e).unwrap() + "\n")
        .collect();
    let path = dir.path().join("history.jsonl");
    std::fs::write(&path, history).unwrap();
    assert_eq!(read_server_record_in(dir.path()).unwrap(), None);
    let plain = check_run_file_with_server(&path, &PARAMS, None, None).unwrap();
    assert!(plain.checks.lock.server.is_none());
    let json = serde_json::to_string(&plain.checks.lock).unwrap();
    assert!(!json.contains("\"server\""), "{json}");
    let server: String = S::default()
        .set(3, "n1", "0-a")
        .at(380, "n1", RecordChange::Expired, None)
        .0
        .iter()
        .map(|e| serde_json::to_string(e).unwrap() + "\n")
        .collect();
    std::fs::write(dir.path().join("server.jsonl"), server).unwrap();
    let record = read_server_record_in(dir.path()).unwrap().expect("read");
    assert_eq!(record.events.len(), 2);
    let found = check_run_file_with_server(&path, &PARAMS, None, Some(record.events)).unwrap();
    let lock = &found.checks.lock;
    assert_eq!(lock.verdict, plain.checks.lock.verdict);
    assert_eq!(of(lock, FindingKind::SilentLoss).len(), 1, "{lock}");
    // results.json keeps it, and reads it back; a report written before it reads as before.
    let json = serde_json::to_string(lock).unwrap();
    assert!(json.contains("\"kind\":\"silent-loss\""), "{json}");
    assert!(json.contains("\"server_indices\":[0,1]"), "{json}");
    let back: LockReport = serde_json::from_str(&json).unwrap();
    assert_eq!(&back, lock);
    let old: LockReport =
        serde_json::from_str(&serde_json::to_string(&plain.checks.lock).unwrap()).unwrap();
    assert!(old.server.is_none());
}

#[test]
fn a_set_seen_shortly_after_the_grant_is_still_the_grantee_s_and_one_seen_later_is_nobody_s() {
    let events = paused_holder(None).build();
    // Seen 10 ms after the acquire's reply: within the watcher's lag, process 0's.
    let server = S::default()
        .set(15, "n1", "redis-v1")
        .at(380, "n1", RecordChange::Expired, None)
        .0
        .clone();
    let r = check(&events, &server);
    assert_eq!(of(&r, FindingKind::SilentLoss).len(), 1, "{r}");
    // Seen 35 ms after it: no process's.
    let server = S::default()
        .set(40, "n1", "redis-v1")
        .at(380, "n1", RecordChange::Expired, None)
        .0
        .clone();
    let r = check(&events, &server);
    assert!(r.observations.is_empty(), "{r}");
    let notes = &r.server.as_ref().unwrap().notes;
    assert!(
        notes[0].ends_with("while no process had an acquire or renewal of the lock open (nor had completed one within 20 ms)"),
        "{notes:?}"
    );
}

#[test]
fn a_key_that_names_no_lock_is_noted_and_judges_nothing() {
    let events = paused_holder(Some("0-a")).build();
    let mut server = S::default();
    server.set(3, "n1", "0-a");
    server.0[0].key = "other".into();
    let r = check(&events, &server.0);
    let view = r.server.as_ref().unwrap();
    assert!(view.locks.is_empty(), "{view:?}");
    assert_eq!(
        view.notes,
        vec!["key \"other\" (on n1, server record #0) names no lock of the history: not judged"]
    );
}

#[test]
fn an_acquire_whose_outcome_is_unknown_may_have_set_the_record_any_time_later() {
    // Process 1's acquire timed out (`info`): its request may reach the server after; a
    // value seen long after is still possibly its, and process 0's only if no such request
    // was left.
    let mut h = paused_holder(None);
    h.event(
        0,
        Process::Client(1),
        EventKind::Invoke,
        F::Acquire,
        Value::default(),
    )
    .event(
        2,
        Process::Client(1),
        EventKind::Info,
        F::Acquire,
        Value::default(),
    );
    let server = S::default()
        .set(4, "n1", "redis-v1")
        .at(380, "n1", RecordChange::Expired, None)
        .0
        .clone();
    let r = check(&h.build(), &server);
    assert!(r.observations.is_empty(), "{r}");
    let l = &r.server.as_ref().unwrap().locks[0];
    assert_eq!((l.records[0].process, l.unattributed_values), (None, 1));
}

#[test]
fn the_owner_value_an_adapter_reported_attributes_a_value_set_while_two_acquires_were_open() {
    // As above, but process 0's adapter said which value its library stores (`owner` on its
    // `acquire ok`, Redisson's `<uuid>:<threadId>`): the value is process 0's, the expiry
    // under its pause a silent loss.
    let (events, server) = contended(Some("lib-x"));
    let r = check(&events, &server);
    let l = &r.server.as_ref().unwrap().locks[0];
    assert_eq!((l.unattributed_values, l.holdings_judged), (0, 1), "{r}");
    assert_eq!(l.records[0].process, Some(0));
    let losses = of(&r, FindingKind::SilentLoss);
    assert_eq!(losses.len(), 1, "{r}");
    assert_eq!(losses[0].processes, [0]);
}
