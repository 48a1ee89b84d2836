//! The run report names the server a run used with the version the server itself reported,
//! and says so when the server could not say.

mod support;

use lockpick_checker::results::ServerRan;
use lockpick_reports::render_run_report;
use support::{gc_pause_history, results_for};

#[test]
fn the_report_names_the_server_version_that_ran() {
    let events = gc_pause_history();
    let mut results = results_for(&events, "etcd-3.6-baseline");
    results.server = Some(ServerRan {
        kind: "etcd".to_owned(),
        release: Some("3.6".to_owned()),
        version: Some("3.6.16".to_owned()),
        instance: Some("20261125T211200Z-4711-3, its run 2".to_owned()),
    });
    let html = render_run_report(&results, &events).unwrap();
    assert!(html.contains(r#"<span id="server">on etcd 3.6.16</span>"#));
    assert!(
        html.contains(
            r#"<span id="instance">(server instance 20261125T211200Z-4711-3, its run 2)</span>"#
        ),
        "the report names the server instance"
    );

    results.server.as_mut().unwrap().version = None;
    let html = render_run_report(&results, &events).unwrap();
    assert!(html.contains("on etcd 3.6 (its version not reported)"));

    // Results written before the server was recorded still render, without the line.
    results.server = None;
    let html = render_run_report(&results, &events).unwrap();
    assert!(!html.contains(r#"id="server""#));
}
