//! Runs given bad runtime inputs from outside, against real redis-servers: an `--external`
//! address nobody listens on, and a client pause far longer than the run cut by Ctrl-C.

use lockpick_checker::history::{read_history, EventKind, Process, F};
use lockpick_harness::run::{run_scenario, RunError, RunOptions};
use lockpick_harness::scenario::{parse_scenario, Scenario};
use std::path::Path;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Writes `text` as `<dir>/<name>.toml` and loads it (a run copies its scenario file).
fn scenario(dir: &Path, name: &str, text: &str) -> Scenario {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    parse_scenario(&path, text).unwrap()
}

#[tokio::test]
async fn an_external_node_nobody_listens_on_is_a_harness_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let s = scenario(
        tmp.path(),
        "ext",
        "name = \"ext\"\n[backend]\nkind = \"redis\"\n[workload]\nkind = \"fenced-write\"\nclients = 2\nduration_ms = 1000\n",
    );
    // A port that was free a moment ago and is closed now.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let opts = RunOptions {
        store: tmp.path().join("store"),
        external: vec![closed],
        ..RunOptions::default()
    };
    let run = run_scenario(&s, &opts, CancellationToken::new());
    let outcome = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the run ends");
    match outcome {
        Err(e @ RunError::Unreachable { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains(&format!("reach external node n1 at {closed}")),
                "{msg}"
            );
        }
        Err(other) => panic!("another error: {other}"),
        Ok(o) => panic!(
            "the run went on with an unreachable node: {} events, {:?}",
            o.results.ops, o.results.verdict
        ),
    }
}

#[tokio::test]
async fn the_first_interrupt_cuts_a_client_pause_short_and_the_run_is_checked() {
    let tmp = tempfile::tempdir().unwrap();
    // One client, paused for the longest pause allowed (an hour) right after its first grant.
    let s = scenario(
        tmp.path(),
        "long-pause",
        "name = \"long-pause\"\n[backend]\nkind = \"redis\"\n[workload]\nkind = \"fenced-write\"\nclients = 1\nduration_ms = 600000\n[[nemesis]]\nfault = \"client-pause\"\npoint = \"after-acquire\"\nclient = 0\nduration_ms = 3600000\n",
    );
    let store = tmp.path().join("store");
    let opts = RunOptions {
        store: store.clone(),
        ..RunOptions::default()
    };
    let interrupt = CancellationToken::new();
    let history = store
        .join("long-pause")
        .join("latest")
        .join("history.jsonl");
    let watcher = {
        let interrupt = interrupt.clone();
        let history = history.clone();
        tokio::spawn(async move {
            // Ctrl-C once the pause has begun, as a user tired of waiting would.
            loop {
                let text = std::fs::read_to_string(&history).unwrap_or_default();
                if text.contains("\"f\":\"pause\"") {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            interrupt.cancel();
        })
    };
    let run = run_scenario(&s, &opts, interrupt.clone());
    let outcome = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("one interrupt ends the run in spite of the hour-long pause")
        .expect("the run completes");
    watcher.await.unwrap();
    assert!(outcome.results.interrupted);
    assert!(outcome.dir.join("results.json").is_file());
    let events = read_history(&outcome.dir.join("history.jsonl")).unwrap();
    let resume = events
        .iter()
        .find(|e| e.process == Process::Nemesis && e.f == F::Resume && e.kind == EventKind::Info)
        .expect("the pause's end is recorded");
    let note = resume.value.note.as_deref().unwrap_or_default();
    assert!(
        note.starts_with("cut short by the interrupt after ") && note.ends_with(" of 3600000 ms"),
        "{note:?}"
    );
}
