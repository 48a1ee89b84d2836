//! A check that runs out of its time or memory budget says `unknown`, never a guess.

use lockpick_checker::lin_search::{Budget, Datum, History, Op, OpF};
use lockpick_checker::linearizability::check_history;
use lockpick_checker::models::kv;
use lockpick_checker::verdict::Verdict;
use std::time::{Duration, Instant};

/// Sixteen concurrent appends and a put, then a get of a value no order of them produces:
/// deciding it means trying every order, far more than any budget below allows. (Without the
/// put, the get's value would rule out every string that does not start it as soon as it is
/// made; the put may come between any of them and the get.)
fn hard_history() -> History {
    let mut ops: Vec<Op> = (0..16)
        .map(|i| Op {
            process: i,
            f: OpF::Append,
            key: Some("k".into()),
            arg: Datum::Str(format!("<{i}>").into()),
            out: Some(Datum::Nil),
            call: i,
            ret: Some(100 + i),
            call_ns: i,
            ret_ns: Some(100 + i),
        })
        .collect();
    ops.push(Op {
        process: 98,
        f: OpF::Put,
        key: Some("k".into()),
        arg: Datum::Str("p".into()),
        out: Some(Datum::Nil),
        call: 16,
        ret: Some(116),
        call_ns: 16,
        ret_ns: Some(116),
    });
    ops.push(Op {
        process: 99,
        f: OpF::Get,
        key: Some("k".into()),
        arg: Datum::Nil,
        out: Some(Datum::Str("impossible".into())),
        call: 200,
        ret: Some(201),
        call_ns: 200,
        ret_ns: Some(201),
    });
    History { ops }
}

#[test]
fn running_out_of_time_gives_unknown() {
    let budget = Budget {
        time: Some(Duration::from_millis(200)),
        memory_bytes: None,
        threads: 1,
    };
    let start = Instant::now();
    let r = check_history(&hard_history(), &kv::KV, &budget).unwrap();
    assert_eq!(r.verdict, Verdict::Unknown, "{r}");
    assert!(r.violation.is_none());
    let why = r.unknown_reason.expect("reason given");
    assert!(why.contains("time budget"), "{why}");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "stopped late: {:?}",
        start.elapsed()
    );
}

#[test]
fn running_out_of_memory_gives_unknown() {
    let budget = Budget {
        time: Some(Duration::from_secs(60)),
        memory_bytes: Some(4 << 20),
        threads: 1,
    };
    let r = check_history(&hard_history(), &kv::KV, &budget).unwrap();
    assert_eq!(r.verdict, Verdict::Unknown, "{r}");
    let why = r.unknown_reason.expect("reason given");
    assert!(why.contains("memory budget"), "{why}");
}
