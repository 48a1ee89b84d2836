//! The run report draws the server's own record of the lock under the processes' lanes, a
//! lane per node, each value titled with whose it was and how it ended; a run without a
//! record draws none.

mod support;

use lockpick_checker::lock::{LockServerView, Ownership, RecordEnd, ServerView};
use lockpick_reports::render_run_report;
use support::{gc_pause_history, results_for};

const MS: u64 = 1_000_000;

#[test]
fn the_timeline_shows_each_nodes_record_under_the_holders_beliefs() {
    let events = gc_pause_history();
    let mut results = results_for(&events, "redis-gc-pause");
    let html = render_run_report(&results, &events).unwrap();
    assert!(!html.contains("(srv)"), "no record, no server lane");

    // Process 0's value expired at 400 ms while it was paused; process 1's was set at 420 ms
    // and deleted by its release.
    results.lock.server = Some(ServerView {
        events: 4,
        locks: vec![LockServerView {
            lock: "lock".into(),
            nodes: vec!["n1".into()],
            majority: 1,
            records: vec![
                held(0, "0-aaaa", [101, 400, 402], RecordEnd::Expired, [0, 1]),
                held(1, "1-bbbb", [419, 440, 440], RecordEnd::Deleted, [2, 3]),
            ],
            ..LockServerView::default()
        }],
        ..ServerView::default()
    });
    let html = render_run_report(&results, &events).unwrap();
    assert!(html.contains("n1 (srv)"), "a lane for the node");
    assert!(
        html.contains(
            "<title>n1 held p0's value &quot;0-aaaa&quot; of key &quot;lockpick:lock:lock&quot; from 0.101 s until 0.400 s (expired, seen at 0.402 s) (server record #0)</title>"
        ),
        "the expired value's title"
    );
    assert!(html.contains("until 0.440 s (deleted) (server record #2)"));
}

#[test]
fn a_fault_of_a_node_is_drawn_on_that_node_s_server_lane_and_one_of_no_drawn_node_over_every_lane()
{
    use lockpick_checker::history::{EventKind, Process, Value, F};
    let mut events = gc_pause_history();
    let nodes = |n: &str| Value {
        nodes: vec![n.to_owned()],
        ..Value::default()
    };
    // After the story: n2 crashes and restarts; n9, which has no lane, is cut off and healed.
    let mut h = support::History { events };
    for (ms, f, node) in [
        (1100.0, F::Crash, "n2"),
        (1200.0, F::Restart, "n2"),
        (1300.0, F::Partition, "n9"),
        (1400.0, F::Heal, "n9"),
    ] {
        h.push(ms, Process::Nemesis, EventKind::Info, f, nodes(node));
    }
    events = h.events;
    let mut results = results_for(&events, "redis-crash");
    results.lock.server = Some(ServerView {
        events: 0,
        locks: vec![LockServerView {
            lock: "lock".into(),
            nodes: vec!["n1".into(), "n2".into(), "n3".into()],
            majority: 2,
            ..LockServerView::default()
        }],
        ..ServerView::default()
    });
    let html = render_run_report(&results, &events).unwrap();
    // The hover targets of the faults, in the overview: (height, title).
    let svg = &html[html.find(r#"id="timeline-overview""#).unwrap()..];
    let svg = &svg[..svg.find("</svg>").unwrap()];
    let faults: Vec<(i64, String)> = svg
        .split(r#"<rect class="fault""#)
        .skip(1)
        .map(|r| {
            let height = r.split(r#"height=""#).nth(1).unwrap();
            let height: i64 = height[..height.find('"').unwrap()].parse().unwrap();
            let title = r.split("<title>").nth(1).unwrap();
            (height, title[..title.find("</title>").unwrap()].to_owned())
        })
        .collect();
    let of = |node: &str| -> Vec<i64> {
        (faults.iter())
            .filter(|(_, t)| t.contains(node))
            .map(|(h, _)| *h)
            .collect()
    };
    let (crash, cut) = (of("n2"), of("n9"));
    assert_eq!(crash.len(), 1, "one band, on n2's lane: {faults:?}");
    assert_eq!(cut.len(), 1, "{faults:?}");
    // Five lanes (p0, p1, and n1..n3): the cut of n9 spans them all, the crash one.
    assert!(crash[0] * 4 < cut[0], "{faults:?}");
}

/// Node n1's record of `value`, process `p`'s, on lockpick's key: set, ended and seen ended at
/// `[set, end, seen]` ms, at server-record entries `[set, end]`.
fn held(
    p: u64,
    value: &str,
    [set, end, seen]: [u64; 3],
    ended: RecordEnd,
    [from, to]: [u64; 2],
) -> Ownership {
    Ownership {
        node: "n1".into(),
        key: "lockpick:lock:lock".into(),
        value: value.into(),
        process: Some(p),
        start_ns: set * MS,
        set_index: from,
        end_ns: Some(end * MS),
        ended: Some(ended),
        observed_end_ns: Some(seen * MS),
        end_index: Some(to),
        overwritten_by: None,
    }
}
