//! A SQL server paused (SIGSTOP of its whole process tree) when lockpick is SIGKILLed must
//! not survive it. PDEATHSIG reaches only the process lockpick forked: postgres's backends and
//! helpers, stopped, used to stay behind forever once the postmaster died. The helper below
//! stands in for lockpick: it starts the server, opens a connection (a postgres backend),
//! pauses the node and waits to be SIGKILLed.

mod processes_support;

use std::ffi::OsStr;
use std::net::TcpStream;
use std::time::Duration;

use lockpick_harness::backends::mariadb::MariaDbOptions;
use lockpick_harness::backends::postgres::PgOptions;
use lockpick_harness::processes::{descendants, NodeKind, Supervisor};
use processes_support::{kill_helper_and_list_survivors, proc_state, processes_in, spawn_helper};

const HELPER_DIR: &str = "LOCKPICK_DB_PAUSED_HELPER_DIR";
const HELPER_KIND: &str = "LOCKPICK_DB_PAUSED_HELPER_KIND";
const LONG: Duration = Duration::from_secs(5);

fn node_kind(name: &str) -> NodeKind {
    match name {
        "postgres" => NodeKind::from(PgOptions::default()),
        "mariadb" => NodeKind::from(MariaDbOptions::default()),
        other => panic!("no such server kind in this test: {other}"),
    }
}

/// Not a test by itself: the lockpick stand-in of the tests below.
#[test]
#[ignore = "helper process, run by the paused_*_dies_when_lockpick_is_sigkilled tests"]
fn helper_pauses_a_server_until_killed() {
    let (Some(dir), Ok(kind)) = (std::env::var_os(HELPER_DIR), std::env::var(HELPER_KIND)) else {
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut sup = Supervisor::new(std::path::Path::new(&dir));
    let node = runtime.block_on(sup.start("db", node_kind(&kind))).unwrap();
    // postgres forks a backend for every connection it accepts.
    let _connection = TcpStream::connect(node.addr).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    sup.pause("db").unwrap();
    let mut pids = descendants(node.pid);
    pids.push(node.pid);
    let list: Vec<String> = pids.iter().map(u32::to_string).collect();
    println!("PAUSED_PIDS {}", list.join(","));
    std::thread::sleep(Duration::from_secs(60));
    drop(sup);
}

/// Runs the helper for `kind`, SIGKILLs it once its server is paused, and returns the
/// server's processes that were stopped before and any process of the run left after.
fn kill_lockpick_while_paused(kind: &str) -> (Vec<u32>, Vec<u32>) {
    let run = tempfile::tempdir().unwrap();
    let env = [
        (HELPER_DIR, run.path().as_os_str()),
        (HELPER_KIND, OsStr::new(kind)),
    ];
    let (helper, pids) = spawn_helper("helper_pauses_a_server_until_killed", &env, "PAUSED_PIDS");
    // The SIGSTOPs were sent before pause returned; delivery is asynchronous.
    let stopped: Vec<u32> = pids
        .iter()
        .copied()
        .filter(|pid| {
            (0..200).any(|_| {
                let stopped = matches!(proc_state(*pid), Some('T' | 't'));
                if !stopped {
                    std::thread::sleep(Duration::from_millis(10));
                }
                stopped
            })
        })
        .collect();
    let mut left = kill_helper_and_list_survivors(helper, &pids, LONG);
    for pid in processes_in(run.path()) {
        // SAFETY: plain kill(2), so a failing test leaves nothing behind.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        if !left.contains(&pid) {
            left.push(pid);
        }
    }
    (stopped, left)
}

#[test]
fn paused_postgres_dies_when_lockpick_is_sigkilled() {
    let (stopped, left) = kill_lockpick_while_paused("postgres");
    // The postmaster and its helpers (checkpointer, writers, the connection's backend).
    assert!(stopped.len() >= 5, "only {stopped:?} were paused");
    assert!(left.is_empty(), "{left:?} outlived a SIGKILLed lockpick");
}

#[test]
fn paused_mariadb_dies_when_lockpick_is_sigkilled() {
    let (stopped, left) = kill_lockpick_while_paused("mariadb");
    assert!(!stopped.is_empty(), "mariadbd was not paused");
    assert!(left.is_empty(), "{left:?} outlived a SIGKILLed lockpick");
}
