//! `lockpick bench` end to end: a real redis lock and a real PostgreSQL lock at two client
//! counts, the figures read back from bench.json and the stored scenario repeating a point.

mod cli_support;

use cli_support::{lockpick, stderr};
use serde_json::Value;
use std::path::Path;

const TWO_LOCKS: &str = r#"
name = "bench-test"
seeds = 1
[workload]
clients = 2
duration = "1000ms"
[lock]
acquire_timeout_ms = 1000
op_timeout_ms = 500

[[column]]
name = "none"
about = "no fault"

[[row]]
lock = "redis"
ttl_ms = 1000
expect.none = "valid: no fault"

[[row]]
lock = "pg-advisory"
ttl_ms = 1000
lease_ms = 1000
expect.none = "valid: no fault"
"#;

fn bench_json(store: &Path) -> Value {
    let root = store.join("bench");
    let dir = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    serde_json::from_slice(&std::fs::read(dir.join("bench.json")).unwrap()).unwrap()
}

#[test]
fn bench_measures_grants_latency_and_server_cpu_of_each_lock() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("m.toml");
    std::fs::write(&file, TWO_LOCKS).unwrap();
    let store = tmp.path().join("store");
    let md = tmp.path().join("perf.md");
    let out = lockpick(&[
        "bench",
        file.to_str().unwrap(),
        "--clients",
        "1,3",
        "--duration",
        "1",
        "--store",
        store.to_str().unwrap(),
        "--markdown",
        md.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json = bench_json(&store);
    let points = json["points"].as_array().unwrap();
    assert_eq!(points.len(), 4, "{json:#}");
    for p in points {
        assert_eq!(p["error"], Value::Null, "{p:#}");
        assert_eq!(p["verdict"], "valid", "{p:#}");
        // What the history shows, not how fast this machine is: grants happened, each
        // with a latency, and the servers lockpick started used some CPU for them.
        assert!(p["grants"].as_u64().unwrap() > 0, "{p:#}");
        assert!(p["acquire_p50_ms"].as_f64().unwrap() <= p["acquire_p99_ms"].as_f64().unwrap());
        assert!(p["server_cpu_ms"].as_u64().is_some(), "{p:#}");
        // The run is an ordinary stored run with no hold and no think time.
        let run = store.join(p["run"].as_str().unwrap());
        let scenario = std::fs::read_to_string(run.join("scenario.toml")).unwrap();
        assert!(scenario.contains("hold_ms = [0, 0]"), "{scenario}");
        assert!(!scenario.contains("[[nemesis]]"), "{scenario}");
    }
    let clients: Vec<u64> = points
        .iter()
        .map(|p| p["clients"].as_u64().unwrap())
        .collect();
    assert_eq!(clients, [1, 3, 1, 3]);
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.contains("| pg-advisory | 3 |"), "{text}");
    assert!(tmp.path().join("perf-handoff.svg").is_file());
}

#[test]
fn bench_refuses_an_unknown_row_and_a_zero_client_count() {
    let out = lockpick(&["bench", "--rows", "no-such-lock", "--store", "/nonexistent"]);
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(
        err.contains("no-such-lock") && err.contains("allowed: redis"),
        "{err}"
    );
    let out = lockpick(&["bench", "--clients", "0,4"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("allowed: 1 to 1000"),
        "{}",
        stderr(&out)
    );
}
