//! A lock server that exits on its own during a run (here: killed from outside lockpick, as a
//! server's own crash would end it) leaves no verdict: the run ends in an error that names
//! the node and its log, since what the clients saw after it died is not the scenario's.

use lockpick_harness::run::{run_scenario, RunError, RunOptions};
use lockpick_harness::scenario::load_scenario;
use lockpick_store::RunState;
use std::path::Path;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The pid of node `node` of the first run folder under `store` that names its servers.
fn node_pid(store: &Path, node: &str) -> Option<u32> {
    for scenario in std::fs::read_dir(store).ok()?.flatten() {
        for run in std::fs::read_dir(scenario.path()).ok()?.flatten() {
            if let Ok(Some(state)) = RunState::read(&run.path()) {
                if let Some(pid) = state
                    .server_instance
                    .and_then(|i| i.pids.get(node).copied())
                {
                    return Some(pid);
                }
            }
        }
    }
    None
}

#[test]
fn a_lock_server_that_dies_outside_the_plan_ends_the_run_in_an_error_naming_it() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let store = tempfile::tempdir().unwrap();
    let scenario = load_scenario("redis-baseline").unwrap();
    assert!(scenario.nemesis.faults.is_empty(), "no fault kills it");
    let opts = RunOptions {
        seed: Some(1),
        store: store.path().to_owned(),
        ..RunOptions::default()
    };
    let killer = {
        let store = store.path().to_owned();
        std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(60);
            while Instant::now() < deadline {
                if let Some(pid) = node_pid(&store, "n1") {
                    // Well inside the workload: its clients are at work.
                    std::thread::sleep(Duration::from_millis(1500));
                    // SAFETY: kill(2) on a pid this test read from the run's record.
                    unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
                    return true;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            false
        })
    };
    let outcome = rt.block_on(run_scenario(&scenario, &opts, CancellationToken::new()));
    assert!(killer.join().unwrap(), "the run never named its servers");
    match outcome {
        Err(RunError::ServerExited { node, how, log }) => {
            assert_eq!(node, "n1");
            assert!(how.contains("signal 9"), "{how}");
            assert!(log.ends_with("nodes/n1/server.log"), "{}", log.display());
        }
        Err(e) => panic!("another error: {e}"),
        Ok(o) => panic!(
            "a verdict from a run whose server died: {:?}",
            o.results.verdict
        ),
    }
}
