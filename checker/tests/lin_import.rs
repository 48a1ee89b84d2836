//! Importers (Jepsen log, Jepsen EDN, lockpick JSONL) and the EDN export.

use lockpick_checker::history::{Event, EventKind, Process, Value, F, FORMAT_VERSION};
use lockpick_checker::import::{from_events, parse_text, to_jepsen_edn, Format, ImportError};
use lockpick_checker::lin_search::{Budget, Datum, OpF};
use lockpick_checker::linearizability::{check_events, check_history};
use lockpick_checker::models::{kv, lease, mutex, register};
use lockpick_checker::verdict::Verdict;

const LOG: &str = "\
INFO  jepsen.util - 0\t:invoke\t:write\t1
INFO  jepsen.core - something else entirely
INFO  jepsen.util - 1\t:invoke\t:cas\t[1 2]
INFO  jepsen.util - 0\t:ok\t:write\t1
INFO  jepsen.util - 1 :fail :cas [1 2]
INFO  jepsen.util - 2\t:invoke\t:write\t3
INFO  jepsen.util - 3\t:invoke\t:read\tnil
INFO  jepsen.util - 2\t:info\t:write\t:timed-out
INFO  jepsen.util - 3\t:fail\t:read\t:timed-out
INFO  jepsen.util - 4\t:invoke\t:read\tnil
INFO  jepsen.util - 4\t:ok\t:read\t3
";

#[test]
fn jepsen_log_follows_jepsen_meaning_of_fail_and_info() {
    assert_eq!(Format::detect(LOG), Some(Format::JepsenLog));
    let h = parse_text(LOG, None).expect("parse");
    let fs: Vec<OpF> = h.ops.iter().map(|o| o.f).collect();
    // The failed cas is gone; the timed-out write and read stay open.
    assert_eq!(fs, [OpF::Write, OpF::Write, OpF::Read, OpF::Read]);
    assert_eq!(h.ops[0].out, Some(Datum::Nil));
    assert_eq!(h.ops[0].ret, Some(4), "positions are line numbers");
    assert!(h.ops[1].is_open() && h.ops[2].is_open());
    assert_eq!(h.ops[3].out, Some(Datum::Int(3)));
    // Reading 3 needs the timed-out write to have happened: still linearizable.
    let r = check_history(&h, &register::CAS_REGISTER, &Budget::default()).unwrap();
    assert_eq!(r.verdict, Verdict::Valid);
}

#[test]
fn completion_without_invocation_names_its_line() {
    let text = "INFO  jepsen.util - 0\t:ok\t:read\t1\n";
    match parse_text(text, Some(Format::JepsenLog)) {
        Err(ImportError::Parse { line: 1, .. }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_negative_or_oversized_process_in_a_jepsen_log_is_an_error_naming_its_line() {
    // Skipped, the line's write would vanish and the read of 2 below would have no write to
    // explain it; the history must be refused instead, at the line that holds it.
    for process in ["-3", "18446744073709551616"] {
        let text = format!(
            "INFO  jepsen.util - 0\t:invoke\t:read\tnil\n\
             INFO  jepsen.util - {process}\t:invoke\t:write\t2\n\
             INFO  jepsen.util - 0\t:ok\t:read\t2\n"
        );
        match parse_text(&text, Some(Format::JepsenLog)) {
            Err(ImportError::Parse {
                line: 2, message, ..
            }) => assert!(
                message.contains(process) && message.contains("allowed"),
                "{message}"
            ),
            other => panic!("{process}: {other:?}"),
        }
    }
    // A named process (the nemesis) is still not a client's and is skipped.
    let text = "INFO  jepsen.util - :nemesis\t:info\t:start\tnil\n\
                INFO  jepsen.util - 0\t:invoke\t:read\tnil\n\
                INFO  jepsen.util - 0\t:ok\t:read\tnil\n";
    assert_eq!(
        parse_text(text, Some(Format::JepsenLog)).unwrap().ops.len(),
        1
    );
}

#[test]
fn edn_lines_and_history_vector_read_the_same() {
    let lines = r#"{:process 0, :type :invoke, :f :append, :key "k", :value "a"}
{:process 1, :type :invoke, :f :get, :key "k", :value nil}
{:process 0, :type :ok, :f :append, :key "k", :value "a"}
{:process 1, :type :ok, :f :get, :key "k", :value "a"}
{:process :nemesis, :type :info, :f :start, :value nil}
"#;
    let vector = format!("[{}]", lines.replace('\n', " "));
    assert_eq!(Format::detect(lines), Some(Format::JepsenEdn));
    let a = parse_text(lines, None).expect("lines");
    let b = parse_text(&vector, None).expect("vector");
    // Positions are line numbers in one, op numbers in the other; everything else agrees.
    let shape = |h: &lockpick_checker::lin_search::History| {
        h.ops
            .iter()
            .map(|o| (o.process, o.f, o.key.clone(), o.arg.clone(), o.out.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(shape(&a), shape(&b));
    assert_eq!((a.ops[0].call, a.ops[1].call), (1, 2));
    assert_eq!((b.ops[0].call, b.ops[1].call), (0, 1));
    assert_eq!(a.ops.len(), 2);
    assert_eq!(a.ops[1].out, Some(Datum::Str("a".into())));
    assert_eq!(a.ops[1].key.as_deref(), Some("k"));
    let bad = lines.replace(r#":value "a"}"#, r#":value "b"}"#);
    let r = check_history(
        &parse_text(&bad, None).unwrap(),
        &kv::KV,
        &Budget::default(),
    );
    assert_eq!(
        r.unwrap().verdict,
        Verdict::Valid,
        "append b, get b is fine"
    );
    let wrong = lines.replace(
        r#":type :ok, :f :get, :key "k", :value "a""#,
        r#":type :ok, :f :get, :key "k", :value "z""#,
    );
    let r = check_history(
        &parse_text(&wrong, None).unwrap(),
        &kv::KV,
        &Budget::default(),
    );
    assert_eq!(r.unwrap().verdict, Verdict::Invalid);
}

fn event(index: u64, p: Process, kind: EventKind, f: F, value: Value) -> Event {
    Event {
        v: FORMAT_VERSION,
        index,
        time_ns: index * 1000,
        process: p,
        kind,
        f,
        lock: Some("l\"1".into()),
        value,
        error: None,
    }
}

fn lock_run() -> Vec<Event> {
    let c = Process::Client;
    vec![
        event(
            0,
            c(1),
            EventKind::Invoke,
            F::Acquire,
            Value {
                lease_ms: Some(500),
                ..Value::default()
            },
        ),
        event(
            1,
            c(1),
            EventKind::Ok,
            F::Acquire,
            Value {
                token: Some(7),
                ..Value::default()
            },
        ),
        event(
            2,
            Process::Nemesis,
            EventKind::Info,
            F::Partition,
            Value {
                nodes: vec!["n1".into()],
                ..Value::default()
            },
        ),
        event(3, c(2), EventKind::Invoke, F::Acquire, Value::default()),
        event(4, c(1), EventKind::Invoke, F::Release, Value::default()),
        event(5, c(1), EventKind::Ok, F::Release, Value::default()),
        event(
            6,
            c(2),
            EventKind::Ok,
            F::Acquire,
            Value {
                token: Some(8),
                ..Value::default()
            },
        ),
    ]
}

#[test]
fn lockpick_jsonl_is_detected_and_read() {
    let text: String = lock_run()
        .iter()
        .map(|e| serde_json::to_string(e).unwrap() + "\n")
        .collect();
    assert_eq!(Format::detect(&text), Some(Format::Lockpick));
    let h = parse_text(&text, None).expect("parse");
    assert_eq!(h, from_events(&lock_run()).unwrap());
    assert_eq!(h.ops.len(), 3, "nemesis left out");
    assert_eq!(h.ops[0].arg, Datum::Int(500));
    assert_eq!(h.ops[0].out, Some(Datum::Int(7)));
    let r = check_history(&h, &mutex::FENCED_MUTEX, &Budget::default()).unwrap();
    assert_eq!(r.verdict, Verdict::Valid);
}

#[test]
fn edn_export_carries_each_fault_instances_exposure_and_still_reads_back() {
    use lockpick_checker::exposure::{exposures, FaultRule, Plan, Rule};
    use lockpick_checker::fault_verbs::Target;
    use lockpick_checker::import::to_jepsen_edn_exposed;
    let plan = Plan {
        faults: vec![FaultRule {
            verb: lockpick_checker::history::F::Partition,
            target: Target::Nodes,
            rule: Rule::InForceDuringContendedHold,
        }],
        ..Plan::default()
    };
    let judged = exposures(&lock_run(), plan);
    assert_eq!(judged.faults.len(), 1, "{judged:?}");
    let edn = to_jepsen_edn_exposed(&lock_run(), Some(&judged));
    let line = edn
        .lines()
        .find(|l| l.contains(":f :partition"))
        .expect("the partition's op");
    assert!(
        line.contains(":exposure {:rule \"in-force-during-contended-hold\", :exposed "),
        "{line}"
    );
    assert!(
        line.contains(&format!(":why {:?}", judged.faults[0].why)),
        "{line}"
    );
    assert_eq!(
        edn.lines().filter(|l| l.contains(":exposure")).count(),
        1,
        "only the op that started the instance: {edn}"
    );
    let back = parse_text(&edn, None).expect("exported EDN with exposures parses");
    assert_eq!(back.ops.len(), from_events(&lock_run()).unwrap().ops.len());
}

#[test]
fn edn_export_reads_back_as_the_same_operations() {
    let edn = to_jepsen_edn(&lock_run());
    assert_eq!(edn.lines().count(), 7);
    assert!(
        edn.contains(":process :nemesis, :type :info, :f :partition"),
        "{edn}"
    );
    assert!(edn.contains(r#":key "l\"1""#), "{edn}");
    let back = parse_text(&edn, None).expect("exported EDN parses");
    let direct = from_events(&lock_run()).unwrap();
    let strip = |h: lockpick_checker::lin_search::History| {
        h.ops
            .into_iter()
            .map(|o| {
                (
                    o.process, o.f, o.key, o.arg, o.out, o.call, o.ret, o.call_ns,
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(back), strip(direct));
}

#[test]
fn a_lockpick_completion_without_invoke_is_an_error_not_dropped() {
    // issue 14 item 9: an ok acquire of process 2 with no invoke, while process 1 holds the
    // lock, proves a double holder; it was dropped and --model mutex said valid.
    let mut events = lock_run();
    // Process 2's grant of token 8, without its invoke and before process 1 released.
    let mut granted = events[6].clone();
    granted.index = 2;
    events.truncate(2);
    events.push(granted);
    let err = check_events(&events, &mutex::MUTEX, &Budget::default()).unwrap_err();
    assert!(
        err.to_string()
            .contains("line 3: process 2 completed acquire (ok) without invoking it"),
        "{err}"
    );
    let text: String = events
        .iter()
        .map(|e| serde_json::to_string(e).unwrap() + "\n")
        .collect();
    // The lockpick reader refuses it too, naming the line.
    let err = parse_text(&text, None).unwrap_err();
    assert!(
        matches!(err, ImportError::Lockpick(_)) && err.to_string().contains("line 3"),
        "{err}"
    );
}

#[test]
fn a_lockpick_renewal_may_be_in_flight_beside_a_write_of_its_process() {
    // The renewal watchdog extends the lease while its client writes, as the same process.
    let c = Process::Client;
    let mut events = lock_run();
    events.truncate(2);
    let token = Value {
        token: Some(7),
        ..Value::default()
    };
    events.push(event(2, c(1), EventKind::Invoke, F::Write, token.clone()));
    events.push(event(
        3,
        c(1),
        EventKind::Invoke,
        F::Renew,
        Value::default(),
    ));
    events.push(event(4, c(1), EventKind::Ok, F::Renew, Value::default()));
    events.push(event(5, c(1), EventKind::Ok, F::Write, token.clone()));
    let h = from_events(&events).expect("renew beside write pairs");
    let fs: Vec<OpF> = h.ops.iter().map(|o| o.f).collect();
    assert_eq!(fs, [OpF::Acquire, OpF::Write, OpF::Renew]);
    assert!(h.ops.iter().all(|o| !o.is_open()), "{h:?}");
    let r = check_events(&events, &lease::LEASE, &Budget::default()).unwrap();
    assert_eq!((r.verdict, r.passed_over), (Verdict::Valid, 1));
    // Two writes in flight at once are still refused.
    events.insert(3, event(3, c(1), EventKind::Invoke, F::Write, token));
    assert!(from_events(&events).is_err());
}
