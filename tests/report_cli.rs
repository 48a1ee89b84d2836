//! The report commands without a browser: every run writes report.html, `report` renders it
//! again, `check` writes one for a bare history, `serve` refuses non-loopback addresses and
//! prints where it serves.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn lockpick() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lockpick"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"));
    cmd
}

#[test]
fn a_run_writes_its_report_and_report_renders_it_again() {
    let store = tempfile::tempdir().unwrap();
    let out = lockpick()
        .args(["scenario", "redis-baseline", "--time-limit", "1", "--store"])
        .arg(store.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = store.path().join("redis-baseline/latest");
    let report = run.join("report.html");
    let first = std::fs::read_to_string(&report).unwrap();
    assert!(first.contains(r#"<span id="verdict" class="badge valid">VALID</span>"#));
    assert!(first.contains(r#"<p id="no-violations">"#));

    std::fs::remove_file(&report).unwrap();
    let out = lockpick().arg("report").arg(&run).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&report).unwrap(), first);
}

/// Process 0 is paused past its lease; process 1 takes a newer token and writes; process 0
/// then writes its older token and the naive resource accepts it.
const STALE_HISTORY: &str = r#"{"v":1,"index":0,"time_ns":100000000,"process":0,"type":"invoke","f":"acquire","lock":"l"}
{"v":1,"index":1,"time_ns":102000000,"process":0,"type":"ok","f":"acquire","lock":"l","value":{"token":1}}
{"v":1,"index":2,"time_ns":110000000,"process":"nemesis","type":"info","f":"pause","value":{"client":0,"point":"before-write","ms":900}}
{"v":1,"index":3,"time_ns":150000000,"process":1,"type":"invoke","f":"acquire","lock":"l"}
{"v":1,"index":4,"time_ns":420000000,"process":1,"type":"ok","f":"acquire","lock":"l","value":{"token":2}}
{"v":1,"index":5,"time_ns":430000000,"process":1,"type":"invoke","f":"write","lock":"l","value":{"token":2}}
{"v":1,"index":6,"time_ns":432000000,"process":1,"type":"ok","f":"write","lock":"l","value":{"token":2}}
{"v":1,"index":7,"time_ns":1010000000,"process":"nemesis","type":"info","f":"resume","value":{"client":0}}
{"v":1,"index":8,"time_ns":1011000000,"process":0,"type":"invoke","f":"write","lock":"l","value":{"token":1}}
{"v":1,"index":9,"time_ns":1013000000,"process":0,"type":"ok","f":"write","lock":"l","value":{"token":1,"max_token":2}}
"#;

#[test]
fn check_of_a_bare_history_writes_a_report_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("history.jsonl"), STALE_HISTORY).unwrap();
    let out = lockpick().arg("check").arg(dir.path()).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains(r#"class="badge invalid">INVALID</span>"#));
    assert!(html.contains("process 0 wrote with token 1 at 1.011 s after process 1 had written with token 2 at 0.432 s"));
    // The template escapes '/' in the path; the command itself is what matters.
    assert!(html.contains(r#"<pre id="reproduce-command" class="command">cargo run -- check "#));
}

#[test]
fn report_that_cannot_write_its_page_is_a_harness_error() {
    // The run folder reads; the store is what fails. It exited 3 (bad input) before.
    use lockpick_checker::lock::{LockCheckParams, Property};
    use lockpick_checker::results::{RunResults, RESULTS_VERSION};
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("history.jsonl");
    std::fs::write(&history, STALE_HISTORY).unwrap();
    let params = LockCheckParams {
        property: Property::Exclusive,
        deadlock_ms: 3000,
    };
    let found = lockpick_checker::run_checks::check_run_file(&history, &params).unwrap();
    let results = RunResults {
        v: RESULTS_VERSION,
        scenario: "stale".to_owned(),
        backend: "redis-naive".to_owned(),
        seed: 1,
        verdict: found.checks.verdict(),
        expected: None,
        interrupted: false,
        workload_ms: found.end_ns / 1_000_000,
        ops: found.completions,
        history: "history.jsonl".to_owned(),
        reproduce: "cargo run -- scenario stale --seed 1".to_owned(),
        lock: found.checks.lock,
        linearizability: found.checks.linearizability,
        not_exposed: None,
        exposed_by: None,
        exposures: None,
        server: None,
        discipline: None,
        library: None,
        description: None,
    };
    let json = serde_json::to_vec(&results).unwrap();
    std::fs::write(dir.path().join("results.json"), json).unwrap();
    // A folder holds the page's name: no rename replaces it, even for root.
    let page = dir.path().join("report.html");
    std::fs::create_dir_all(page.join("in-the-way")).unwrap();
    let out = lockpick().arg("report").arg(dir.path()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains(&format!("failed to write {}: ", page.display())),
        "{err}"
    );
    // The same folder with the way clear renders.
    std::fs::remove_dir_all(&page).unwrap();
    let out = lockpick().arg("report").arg(dir.path()).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(page.is_file());
}

#[test]
fn report_of_a_folder_without_results_exits_3_and_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = lockpick().arg("report").arg(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    let expected = format!(
        "failed to read {}",
        Path::new(dir.path()).join("results.json").display()
    );
    assert!(err.contains(&expected), "{err}");
}

#[test]
fn serve_refuses_a_non_loopback_address() {
    let out = lockpick()
        .args(["serve", "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a loopback address"));
}

/// Kills the server when the test ends, passed or not.
struct Reaper(Child);

impl Drop for Reaper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn serve_prints_its_address_and_serves_the_store_there() {
    let store = tempfile::tempdir().unwrap();
    let mut server = Reaper(
        lockpick()
            .args(["serve", "--listen", "127.0.0.1:0", "--store"])
            .arg(store.path())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(server.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .rsplit(':')
        .next()
        .and_then(|p| p.trim_end_matches("/\n").parse::<u16>().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"));
    let expected = format!(
        "lockpick: serving {} on http://127.0.0.1:{port}/\n",
        store.path().display()
    );
    assert_eq!(line, expected);
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(answer.contains("<html"), "{answer}");
    drop(server);
}

#[test]
fn compare_with_an_unknown_scenario_exits_3() {
    let out = lockpick()
        .args(["compare", "no-such", "--backends", "redis"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn compare_of_a_pause_that_cannot_outlast_etcds_lease_is_not_exposed_never_valid() {
    // redis-gc-pause pauses a client 700-1100 ms; etcd grants at least a whole second (the
    // 300 ms TTL is rounded up to 1000 ms). Seed 1's longest pause, 1097 ms, outlasts it by
    // less than etcd's revoke lag: no other client is granted the lock while the holder is
    // stopped, so the run could not have shown a violation. It must not say VALID (exit 0),
    // as it used to.
    let store = tempfile::tempdir().unwrap();
    let out = lockpick()
        .args([
            "compare",
            "redis-gc-pause",
            "--backends",
            "etcd",
            "--seed",
            "1",
        ])
        .arg("--store")
        .arg(store.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let runs = store.path().join("redis-gc-pause");
    let run = std::fs::read_dir(&runs)
        .unwrap()
        .map(|r| r.unwrap().path())
        .find(|p| p.join("results.json").exists())
        .unwrap_or_else(|| {
            panic!(
                "no run in {}:
{stdout}
{stderr}",
                runs.display()
            )
        });
    let results: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("results.json")).unwrap()).unwrap();
    // What the history shows decides: a clean run whose pauses fell short is not exposed; had
    // a pause reached past the lease (or a violation shown up), the test says which.
    let verdict = results["verdict"].as_str().unwrap();
    assert_ne!(verdict, "valid", "{results}");
    if verdict == "not-exposed" {
        assert_eq!(
            out.status.code(),
            Some(8),
            "{stdout}
{stderr}"
        );
        let why = results["not_exposed"].as_str().unwrap();
        // Either every pause ended before etcd's whole-second lease, or one outlasted it by
        // less than etcd takes to revoke an expired lease, so nobody took the lock meanwhile.
        assert!(
            why.contains("within its 1000 ms lease")
                || why.contains("the server had not let its lease go"),
            "{why}"
        );
        assert!(stdout.contains(&format!("NOT EXPOSED: {why}")), "{stdout}");
        let instances = results["exposures"]["faults"].as_array().unwrap();
        assert!(
            !instances.is_empty() && instances.iter().all(|x| x["window"].is_null()),
            "{results}"
        );
        let compare = stdout
            .lines()
            .find_map(|l| l.strip_prefix("compare: "))
            .unwrap_or_else(|| panic!("no compare page in:\n{stdout}"));
        let page = std::fs::read_to_string(compare.trim()).unwrap();
        assert!(
            page.contains(r#"<tr class="row-not-exposed" data-backend="etcd">"#),
            "{page}"
        );
        assert!(page.contains("not-exposed-cell\">not exposed: "), "{page}");
    } else {
        // A pause did outlast the lease, and etcd's lock then broke: a safety violation.
        assert_eq!(verdict, "invalid", "{results}");
        assert_eq!(
            out.status.code(),
            Some(1),
            "{stdout}
{stderr}"
        );
    }
    assert_ne!(
        out.status.code(),
        Some(0),
        "{stdout}
{stderr}"
    );
}

#[test]
fn compare_runs_sql_locks_and_the_scenarios_own_lock_keeps_its_client_options() {
    // pg-advisory-gc-pause is invalid only because its [client] sets idle_session_timeout_ms:
    // run with the lock's defaults the server keeps the paused session, nobody else is granted
    // the lock while its holder is stopped, and the pause exposed nothing (docs/exposure.md).
    let store = tempfile::tempdir().unwrap();
    let out = lockpick()
        .args(["compare", "pg-advisory-gc-pause", "--backends"])
        .arg("pg-advisory,mysql-get-lock")
        .arg("--store")
        .arg(store.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let compare = stdout
        .lines()
        .find_map(|l| l.strip_prefix("compare: "))
        .unwrap_or_else(|| panic!("no compare page in:\n{stdout}"));
    let page = std::fs::read_to_string(compare.trim()).unwrap();
    assert!(
        page.contains(r#"<tr class="row-invalid" data-backend="pg-advisory">"#),
        "{page}"
    );
    // The same pause on MariaDB's GET_LOCK: never a violation. Usually not exposed (the server
    // keeps the paused session and its lock); in a clean-clone CI run of be5632b it came out
    // valid instead: one of its three pauses was judged to have opened a window (its history
    // went with the test's temporary store, so which pause and why is not established; the
    // last one, from 5.94 s for 1.72 s, ran into the run's end). Either is a correct answer
    // for a lock that held; invalid is not.
    assert!(
        page.contains(r#"<tr class="row-not-exposed" data-backend="mysql-get-lock">"#)
            || page.contains(r#"<tr class="row-valid" data-backend="mysql-get-lock">"#),
        "{page}"
    );
    // Each run keeps the file as written; the run on another lock says so on top.
    let runs = store.path().join("pg-advisory-gc-pause");
    let mut seen = Vec::new();
    for run in std::fs::read_dir(&runs).unwrap() {
        let run = run.unwrap().path();
        if run.symlink_metadata().unwrap().file_type().is_symlink() {
            continue; // `latest`
        }
        let results: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(run.join("results.json")).unwrap())
                .unwrap();
        let stored = std::fs::read_to_string(run.join("scenario.toml")).unwrap();
        let backend = results["backend"].as_str().unwrap().to_owned();
        let noted = stored.starts_with("# lockpick ran this file with `--backend mysql-get-lock`");
        assert_eq!(noted, backend == "mysql-get-lock", "{backend}:\n{stored}");
        assert!(stored.contains("idle_session_timeout_ms"), "{stored}");
        seen.push(backend);
    }
    seen.sort();
    assert_eq!(seen, ["mysql-get-lock", "pg-advisory"]);
}
