//! A real run killed with SIGKILL at each phase leaves a store that says what happened, and
//! nothing outside it: no server, no libfaketime file in /dev/shm, no JVM perf file in
//! /tmp/hsperfdata_*, and no node data once `lockpick gc` ran (docs/usage.md: "What a run keeps").
//! The phase is hit exactly through the `LOCKPICK_TEST_STOP_AT` hook: the run stops itself
//! (SIGSTOP) right after recording the phase in run.json, and the test kills it there.

mod proc_support;

use proc_support::{alive, children, state};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `lockpick check`'s code for a run that did not end with a check (src/exit_code.rs).
const INCOMPLETE_RUN: i32 = 6;

fn lockpick() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lockpick"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"));
    cmd
}

/// The one run folder under `store/<scenario>/`.
fn run_dir(store: &Path, scenario: &str) -> PathBuf {
    std::fs::read_dir(store.join(scenario))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| !p.ends_with("latest") && p.is_dir())
        .expect("a run folder")
}

/// Waits until `child` has stopped itself at the hook (or fails if it exited instead).
fn wait_stopped(child: &mut Child, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("{what}: lockpick exited ({status}) before reaching the phase");
        }
        if state(child.id()) == Some('T') {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: never reached the phase");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Everything under `/dev/shm` and `/tmp/hsperfdata_*` that names one of `pids`.
fn leftovers_of(pids: &[u32]) -> Vec<PathBuf> {
    let mut dirs = vec![PathBuf::from("/dev/shm")];
    if let Ok(tmp) = std::fs::read_dir("/tmp") {
        dirs.extend(
            tmp.flatten()
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().contains("hsperfdata_")),
        );
    }
    let mut out = Vec::new();
    for dir in dirs {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let named_pid = name
                .rsplit(['_', '/'])
                .next()
                .and_then(|n| n.parse::<u32>().ok());
            if named_pid.is_some_and(|p| pids.contains(&p)) {
                out.push(entry.path());
            }
        }
    }
    out
}

/// Runs `scenario` (name or path) until `phase`, SIGKILLs it there and checks the store.
fn kill_at(scenario: &str, name: &str, phase: &str) {
    let what = format!("{name} killed at {phase}");
    let store = tempfile::tempdir().unwrap();
    let mut child = lockpick()
        .args(["scenario", scenario, "--time-limit", "1", "--store"])
        .arg(store.path())
        .env("LOCKPICK_TEST_STOP_AT", phase)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_stopped(&mut child, &what);
    let servers = children(child.id());
    child.kill().unwrap();
    child.wait().unwrap();

    assert_all_dead(&servers, &what);
    assert_eq!(leftovers_of(&servers), Vec::<PathBuf>::new(), "{what}");

    let dir = run_dir(store.path(), name);
    for file in ["scenario.toml", "schedule.json", "history.jsonl"] {
        assert!(dir.join(file).is_file(), "{what}: no {file}");
    }
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(record["phase"], phase, "{what}: {record}");
    assert!(record["ended"].is_null(), "{what}: {record}");
    if let Ok(bytes) = std::fs::read(dir.join("results.json")) {
        serde_json::from_slice::<serde_json::Value>(&bytes)
            .unwrap_or_else(|e| panic!("{what}: torn results.json: {e}"));
    }

    let out = lockpick().arg("check").arg(&dir).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(INCOMPLETE_RUN), "{what}: {stdout}");
    let sentence = if phase == "created" || phase == "servers-starting" {
        "nothing ran".to_owned()
    } else {
        format!("interrupted during {phase}")
    };
    assert!(stdout.contains(&sentence), "{what}: {stdout}");

    // Node data stays until gc, which keeps everything else.
    let gc = lockpick()
        .args(["gc", "--store"])
        .arg(store.path())
        .output()
        .unwrap();
    assert_eq!(gc.status.code(), Some(0), "{what}: {gc:?}");
    for node in std::fs::read_dir(dir.join("nodes"))
        .into_iter()
        .flatten()
        .flatten()
    {
        assert!(!node.path().join("data").exists(), "{what}: {node:?}");
    }
    assert!(dir.join("history.jsonl").is_file() && dir.join("run.json").is_file());
}

#[test]
fn sigkill_at_each_phase_of_a_redis_run_leaves_a_readable_store() {
    for phase in ["servers-starting", "workload", "teardown", "checking"] {
        kill_at("redis-baseline", "redis-baseline", phase);
    }
}

#[test]
fn sigkill_of_a_clock_fault_run_leaves_nothing_in_dev_shm() {
    kill_at("redis-clock-jump", "redis-clock-jump", "workload");
}

#[test]
fn sigkill_of_a_zookeeper_run_leaves_no_jvm_perf_files() {
    kill_at("zookeeper-baseline", "zookeeper-baseline", "workload");
}

/// A redis run whose client pause lasts an hour (the longest a scenario allows), stopped
/// gracefully (SIGTERM) and held (test hook: it stops itself) at the start of
/// its teardown, with a client in that pause: the child, its run folder, and its servers.
fn endless_pause_in_teardown(store: &Path) -> (Child, PathBuf, Vec<u32>) {
    let scenario = store.join("endless-pause.toml");
    std::fs::write(
        &scenario,
        r#"name = "endless-pause"
[backend]
kind = "redis"
[lock]
ttl_ms = 300
[workload]
kind = "fenced-write"
clients = 2
duration_ms = 60000
hold_ms = [1, 5]
think_ms = [0, 10]
[[nemesis]]
fault = "client-pause"
point = "before-write"
at_ms = 50
duration_ms = 3600000
"#,
    )
    .unwrap();
    let mut child = lockpick()
        .args(["scenario"])
        .arg(&scenario)
        .arg("--store")
        .arg(store)
        .env("LOCKPICK_TEST_STOP_AT", "teardown")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(120);
    let phase = |p: &str| {
        std::fs::read_dir(store.join("endless-pause"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                std::fs::read_to_string(e.path().join("run.json"))
                    .is_ok_and(|t| t.contains(&format!("\"phase\": \"{p}\"")))
            })
    };
    while !phase("workload") {
        assert!(child.try_wait().unwrap().is_none(), "lockpick exited early");
        assert!(Instant::now() < deadline, "the workload never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Wait for the nemesis to arm the pause (it records that in the history), then ask for
    // a graceful stop, which the pause outlasts.
    let dir = run_dir(store, "endless-pause");
    while !std::fs::read_to_string(dir.join("history.jsonl")).is_ok_and(|h| h.contains("pause")) {
        assert!(Instant::now() < deadline, "no client pause was armed");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
    // The run stops itself (test hook) once it records the teardown, servers still up.
    wait_stopped(&mut child, "endless pause");
    let servers = children(pid);
    assert!(servers.len() >= 2, "{servers:?}");
    (child, dir, servers)
}

fn assert_all_dead(servers: &[u32], what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while servers.iter().any(|&p| alive(p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let survivors: Vec<u32> = servers.iter().copied().filter(|&p| alive(p)).collect();
    assert!(
        survivors.is_empty(),
        "{what}: servers {survivors:?} outlived lockpick"
    );
}

/// Issue 14 item 6: a client stuck in a pause that outlasts everything (SIGTERM cannot end
/// it), then SIGKILL: the servers die with lockpick.
#[test]
fn sigkill_while_a_client_pause_never_ends_kills_the_servers() {
    let store = tempfile::tempdir().unwrap();
    let (mut child, _, servers) = endless_pause_in_teardown(store.path());
    child.kill().unwrap();
    child.wait().unwrap();
    assert_all_dead(&servers, "endless pause");
}

/// The second Ctrl-C kills everything at once: run.json says so, and `check` tells it.
#[test]
fn a_second_interrupt_is_recorded_in_run_json() {
    let store = tempfile::tempdir().unwrap();
    let (mut child, dir, servers) = endless_pause_in_teardown(store.path());
    // SAFETY: kill(2) on our own child; the second interrupt is handled once it runs again.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
        libc::kill(child.id() as libc::pid_t, libc::SIGCONT);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_all_dead(&servers, "endless pause");
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(record["phase"], "teardown", "{record}");
    assert_eq!(record["ended"]["how"], "killed", "{record}");
    assert_eq!(record["ended"]["signal"], "SIGINT", "{record}");
    // The servers are dead, so their data went as after any run.
    for node in std::fs::read_dir(dir.join("nodes")).unwrap().flatten() {
        assert!(!node.path().join("data").exists(), "{node:?}");
    }
    let out = lockpick().arg("check").arg(&dir).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(INCOMPLETE_RUN), "{stdout}");
    assert!(
        stdout.contains("interrupted during teardown: a second SIGINT killed it"),
        "{stdout}"
    );
}

/// Issue 14 item 7: `check` on a run folder whose report.html is a symlink used to write the
/// report through the link, outside the folder. It now replaces the link.
#[test]
fn check_replaces_a_report_symlink_instead_of_writing_through_it() {
    let store = tempfile::tempdir().unwrap();
    let out = lockpick()
        .args([
            "scenario",
            "redis-baseline",
            "--time-limit",
            "0.5",
            "--store",
        ])
        .arg(store.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let dir = run_dir(store.path(), "redis-baseline");
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, b"not lockpick's").unwrap();
    let report = dir.join("report.html");
    std::fs::remove_file(&report).unwrap();
    std::os::unix::fs::symlink(&victim, &report).unwrap();

    let out = lockpick().arg("check").arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        std::fs::read(&victim).unwrap() == b"not lockpick's",
        "the report was written through the link, outside the run folder"
    );
    let meta = std::fs::symlink_metadata(&report).unwrap();
    assert!(meta.is_file(), "report.html is still a link");
}

/// A run the harness could not carry out says so in run.json, and `check` tells it.
#[test]
fn a_harness_error_is_recorded_in_run_json() {
    let store = tempfile::tempdir().unwrap();
    // Nothing listens on port 1: the protected resource cannot be reached.
    let out = lockpick()
        .args([
            "scenario",
            "redis-baseline",
            "--resource",
            "127.0.0.1:1",
            "--store",
        ])
        .arg(store.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    let dir = run_dir(store.path(), "redis-baseline");
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(record["phase"], "servers-starting", "{record}");
    assert_eq!(record["ended"]["how"], "harness-error", "{record}");
    let out = lockpick().arg("check").arg(&dir).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(INCOMPLETE_RUN), "{stdout}");
    assert!(
        stdout.contains("nothing ran") && stdout.contains("the harness failed to connect"),
        "{stdout}"
    );
}

/// A run that stopped with a harness error mid-workload (an adapter that broke the protocol):
/// `check` checks what was recorded, says the run is incomplete (exit 6) and, as on every run
/// folder, writes report.html, marked as a partial history.
#[test]
fn check_on_a_run_that_ended_in_a_harness_error_writes_its_report() {
    let store = tempfile::tempdir().unwrap();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("harness/tests/fixtures/broken_adapter.py");
    let scenario = store.path().join("broken.toml");
    std::fs::write(
        &scenario,
        format!(
            "name = \"broken\"\n[server]\nkind = \"redis\"\n[client]\nkind = \"process\"\n\
             command = [\"python3\", \"{}\"]\ninit = {{ break = \"garbage\" }}\n\
             [lock]\nttl_ms = 1000\nacquire_timeout_ms = 1000\nop_timeout_ms = 500\n\
             [workload]\nkind = \"fenced-write\"\nclients = 1\nduration_ms = 30000\n",
            fixture.display()
        ),
    )
    .unwrap();
    let out = lockpick()
        .arg("scenario")
        .arg(&scenario)
        .arg("--store")
        .arg(store.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    // The fixture declares no options: its `init` is passed on, with a warning.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("lockpick: warning: ")
            && err.contains("[client] init (break) is passed to it unchecked"),
        "{err}"
    );
    let dir = run_dir(store.path(), "broken");
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(record["ended"]["how"], "harness-error", "{record}");
    assert!(!dir.join("report.html").exists());
    let out = lockpick().arg("check").arg(&dir).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(INCOMPLETE_RUN), "{stdout}");
    assert!(
        stdout.contains("what was recorded before it stopped"),
        "{stdout}"
    );
    let report = dir.join("report.html");
    assert!(
        stdout.contains(&format!("report: {}", report.display())),
        "{stdout}"
    );
    let page = std::fs::read_to_string(&report).expect("check wrote report.html");
    assert!(page.starts_with("<!DOCTYPE html>"));
}

/// Every spawn path forks from the one long-lived spawner thread, so every server dies with
/// lockpick: sentinels and replicas, and nodes the nemesis restarted mid-run.
#[test]
fn sigkill_kills_sentinels_replicas_and_restarted_nodes() {
    kill_at(
        "redis-failover-lost-lock",
        "redis-failover-lost-lock",
        "workload",
    );

    let store = tempfile::tempdir().unwrap();
    let mut child = lockpick()
        .args([
            "scenario",
            "redlock-crash-no-persistence",
            "--time-limit",
            "60",
            "--store",
        ])
        .arg(store.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let history = |dir: &Path, f: &str| {
        std::fs::read_to_string(dir.join("history.jsonl")).is_ok_and(|h| {
            h.lines().any(|l| {
                l.contains(&format!("\"f\":\"{f}\"")) && !l.contains("\"type\":\"invoke\"")
            })
        })
    };
    let run = || {
        std::fs::read_dir(store.path().join("redlock-crash-no-persistence"))
            .ok()
            .and_then(|mut d| d.find_map(|e| e.ok().map(|e| e.path()).filter(|p| p.is_dir())))
    };
    // The servers as first started: once a client has acquired, every one is up.
    let mut first = Vec::new();
    loop {
        assert!(child.try_wait().unwrap().is_none(), "lockpick exited early");
        assert!(Instant::now() < deadline, "no node was restarted");
        std::thread::sleep(Duration::from_millis(20));
        let Some(dir) = run() else { continue };
        if first.is_empty() && history(&dir, "acquire") {
            first = children(child.id());
        }
        if !first.is_empty() && history(&dir, "restart") {
            break;
        }
    }
    let servers = children(child.id());
    assert!(
        servers.iter().any(|p| !first.contains(p)),
        "no restarted node among {servers:?} (first: {first:?})"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert_all_dead(&servers, "redlock killed after a restart");
}
