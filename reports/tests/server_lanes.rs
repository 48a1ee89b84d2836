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
                Ownership {
                    node: "n1".into(),
                    key: "lockpick:lock:lock".into(),
                    value: "0-aaaa".into(),
                    process: Some(0),
                    start_ns: 101 * MS,
                    set_index: 0,
                    end_ns: Some(400 * MS),
                    ended: Some(RecordEnd::Expired),
                    observed_end_ns: Some(402 * MS),
                    end_index: Some(1),
                    overwritten_by: None,
                },
                Ownership {
                    node: "n1".into(),
                    key: "lockpick:lock:lock".into(),
                    value: "1-bbbb".into(),
                    process: Some(1),
                    start_ns: 419 * MS,
                    set_index: 2,
                    end_ns: Some(440 * MS),
                    ended: Some(RecordEnd::Deleted),
                    observed_end_ns: Some(440 * MS),
                    end_index: Some(3),
                    overwritten_by: None,
                },
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
