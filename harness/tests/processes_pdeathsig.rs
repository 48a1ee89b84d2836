//! The safety net for a SIGKILLed lockpick: nodes carry PDEATHSIG=SIGKILL, and they are forked
//! from a thread that lives as long as the process, so they outlive whichever thread or
//! runtime asked for them but not the process.

mod processes_support;

use std::time::Duration;

use lockpick_harness::backends::redis::RedisOptions;
use lockpick_harness::processes::Supervisor;
use processes_support::{is_running, kill_helper_and_list_survivors, pings, spawn_helper};

const HELPER_ENV: &str = "LOCKPICK_DB_PDEATHSIG_HELPER_DIR";

/// Starts a node from a thread with its own runtime, then lets that thread end: the way a
/// tokio blocking-pool thread ends after being idle.
fn start_from_short_lived_thread(
    run_dir: &std::path::Path,
) -> (Supervisor, u32, std::net::SocketAddr) {
    let run_dir = run_dir.to_path_buf();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut sup = Supervisor::new(&run_dir);
        let node = runtime
            .block_on(sup.start_redis("r", RedisOptions::default()))
            .unwrap();
        (sup, node.pid, node.addr)
    })
    .join()
    .unwrap()
}

#[test]
fn a_node_outlives_the_thread_and_runtime_that_started_it() {
    let run = tempfile::tempdir().unwrap();
    let (sup, pid, addr) = start_from_short_lived_thread(run.path());
    // PDEATHSIG fires at once when the forking thread exits; give it time to land.
    std::thread::sleep(Duration::from_millis(300));
    assert!(is_running(pid), "node died with the thread that started it");
    assert!(pings(addr, Duration::from_secs(2)));
    drop(sup);
    assert!(!is_running(pid));
}

/// Not a test by itself: the child process of `nodes_die_when_lockpick_is_sigkilled`. It
/// starts a node, reports its pid on stdout and waits to be SIGKILLed.
#[test]
#[ignore = "helper process, run by nodes_die_when_lockpick_is_sigkilled"]
fn helper_holds_a_node_until_killed() {
    let Some(dir) = std::env::var_os(HELPER_ENV) else {
        return;
    };
    let (sup, pid, _) = start_from_short_lived_thread(std::path::Path::new(&dir));
    println!("NODE_PID {pid}");
    std::thread::sleep(Duration::from_secs(30));
    drop(sup);
}

#[test]
fn nodes_die_when_lockpick_is_sigkilled() {
    let run = tempfile::tempdir().unwrap();
    let env = [(HELPER_ENV, run.path().as_os_str())];
    let (helper, pids) = spawn_helper("helper_holds_a_node_until_killed", &env, "NODE_PID");
    let pid = pids[0];
    std::thread::sleep(Duration::from_millis(200));
    let alive_before_kill = is_running(pid);
    let survivors = kill_helper_and_list_survivors(helper, &pids, Duration::from_secs(2));
    assert!(alive_before_kill, "node died before its parent was killed");
    assert!(
        survivors.is_empty(),
        "node {pid} outlived its SIGKILLed parent"
    );
}
