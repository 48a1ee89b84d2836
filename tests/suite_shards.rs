//! `suite --shard K/N` and `lockpick merge` of the shards' stores: every (scenario, seed) run
//! made by exactly one shard, and the merged record, trend page and JUnit file those of one
//! suite; a shard not given is an error case, never a pass. And the suite's verdict classes:
//! a scenario expected to deadlock passes as stuck, never as invalid.

mod cli_support;

use cli_support::{lockpick, only_dir, stderr};
use serde_json::Value;
use std::path::Path;

/// The one suite record under `store`.
fn record(store: &Path) -> Value {
    let dirs: Vec<_> = std::fs::read_dir(store.join("suite"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("suite.json").is_file())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    serde_json::from_slice(&std::fs::read(dirs[0].path().join("suite.json")).unwrap()).unwrap()
}

fn cases(record: &Value) -> Vec<(String, u64, String)> {
    let mut out: Vec<(String, u64, String)> = record["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["scenario"].as_str().unwrap().to_owned(),
                c["seed"].as_u64().unwrap(),
                c["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_suite_in_two_shards_merges_into_one_record_and_a_missing_shard_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let stores: Vec<_> = (1..=2).map(|k| tmp.path().join(format!("s{k}"))).collect();
    let mut made = Vec::new();
    for (k, store) in (1..=2).zip(&stores) {
        let shard = format!("{k}/2");
        let markdown = tmp.path().join(format!("s{k}.md"));
        let out = lockpick(&[
            "suite",
            "--filter",
            "redis-baseline",
            "--seeds",
            "3",
            "--shard",
            &shard,
            "--store",
            store.to_str().unwrap(),
            "--markdown",
            markdown.to_str().unwrap(),
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "shard {shard}: {}",
            stderr(&out)
        );
        let r = record(store);
        assert_eq!(r["shard"], shard.as_str());
        // The suite's markdown: the shard's runs of the scenario, all as expected, with the
        // server version the runs reported.
        let page = std::fs::read_to_string(&markdown).unwrap();
        let n = cases(&r).len();
        assert!(
            page.contains(&format!(
                "| `redis-baseline` | valid | {n}/{n} | valid {n} | built-in client | redis"
            )),
            "{page}"
        );
        assert!(page.contains(&format!("(shard {shard})")), "{page}");
        made.extend(cases(&r));
    }
    made.sort();
    let seeds: Vec<u64> = made.iter().map(|c| c.1).collect();
    assert_eq!(seeds.len(), 3, "3 seeds, each run by one shard: {made:?}");
    assert!(made
        .iter()
        .all(|c| c.0 == "redis-baseline" && c.2 == "passed"));

    let merged = tmp.path().join("merged");
    let junit = tmp.path().join("junit.xml");
    let out = lockpick(&[
        "merge",
        stores[0].to_str().unwrap(),
        stores[1].to_str().unwrap(),
        "--store",
        merged.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = record(&merged);
    assert_eq!(cases(&r), made);
    assert_eq!(r["shard"], Value::Null);
    assert!(!r["command"].as_str().unwrap().contains("--shard"), "{r:#}");
    for c in r["cases"].as_array().unwrap() {
        let run = c["run"].as_str().unwrap();
        assert!(merged.join(run).join("results.json").is_file(), "{run}");
    }
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains(r#"tests="3" failures="0" errors="0""#),
        "{xml}"
    );
    // `report` on the merged record's folder writes its markdown again, from its runs; on a
    // run's folder, --markdown is refused naming what it takes.
    let folder = only_dir(&merged.join("suite"));
    let page = tmp.path().join("merged.md");
    let out = lockpick(&[
        "report",
        folder.to_str().unwrap(),
        "--markdown",
        page.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page = std::fs::read_to_string(&page).unwrap();
    assert!(
        page.contains("3 of 3 run(s) as expected.")
            && page
                .contains("| `redis-baseline` | valid | 3/3 | valid 3 | built-in client | redis"),
        "{page}"
    );
    let run = merged.join(r["cases"][0]["run"].as_str().unwrap());
    let out = lockpick(&[
        "report",
        run.to_str().unwrap(),
        "--markdown",
        tmp.path().join("no.md").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("holds no suite.json; allowed: a suite record's folder"),
        "{}",
        stderr(&out)
    );

    // Without shard 2: its runs are an error case in the record and the JUnit file.
    let partial = tmp.path().join("partial");
    let junit = tmp.path().join("partial.xml");
    let out = lockpick(&[
        "merge",
        stores[0].to_str().unwrap(),
        "--store",
        partial.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("suite shard 2/2 was not given"),
        "{}",
        stderr(&out)
    );
    let r = record(&partial);
    assert_eq!(r["missing_shards"], serde_json::json!(["2/2"]));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("shard 2/2"), "{xml}");
    assert!(
        xml.contains(r#"<testsuites name="lockpick suite" tests="3" failures="0" errors="1""#),
        "{xml}"
    );
}

#[test]
fn a_scenario_expected_stuck_passes_as_stuck_and_exits_7_as_a_scenario() {
    // redis-naive-crash: a holder crashes with a SETNX lock without TTL; nobody else ever
    // holds it. A deadlock, liveness: the run is stuck (its own exit code), and the suite
    // compares it with the scenario's `expected = "stuck"`.
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("s");
    let junit = tmp.path().join("junit.xml");
    let out = lockpick(&[
        "suite",
        "--filter",
        "redis-naive-crash",
        "--seeds",
        "1",
        "--store",
        store.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = record(&store);
    let case = &r["cases"][0];
    assert_eq!(case["expected"], "stuck", "{r:#}");
    assert_eq!(case["verdict"], "stuck", "{r:#}");
    assert_eq!(case["status"], "passed", "{r:#}");
    let run = store.join(case["run"].as_str().unwrap());
    let results: Value =
        serde_json::from_slice(&std::fs::read(run.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["verdict"], "stuck");
    let kinds: Vec<&str> = results["lock"]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.iter().all(|k| *k == "deadlock"), "{kinds:?}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains(r#"tests="1" failures="0" errors="0""#),
        "{xml}"
    );

    // The same run as a scenario: exit 7 (stuck), never 1 (a safety violation).
    let out = lockpick(&[
        "scenario",
        "redis-naive-crash",
        "--store",
        store.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
}
