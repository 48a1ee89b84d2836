//! `lockpick explore` end to end on a real redis-server and a real adapter: lockpick's toy lock
//! whose acquire is GET then SET (clients/python/toys/check_then_set.py) breaks under any
//! schedule, so a short search finds it; the shrunk scenario file it writes runs with
//! `lockpick scenario` like any other. The search draws the workload's shape as well as the
//! faults, and every run's file holds the shape it ran with. The full figures (each toy, five
//! seeds, ten-minute budgets) are `scripts/explore-toys`'s, not a test's.

mod cli_support;

use cli_support::{lockpick, stderr};
use std::path::Path;

#[test]
fn a_short_search_finds_the_toy_bug_shrinks_it_and_the_file_it_writes_runs() {
    let store = tempfile::tempdir().unwrap();
    let store_arg = store.path().to_str().unwrap();
    let out = lockpick(&[
        "explore",
        "toy-check-then-set-baseline",
        "--budget",
        "30s",
        "--shrink-budget",
        "20s",
        "--repro",
        "1/1",
        "--confirm",
        "2",
        "--seed",
        "1",
        "--store",
        store_arg,
    ]);
    let err = stderr(&out);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{text}\n{err}");
    assert!(
        err.contains("faults tried"),
        "progress on the terminal: {err}"
    );
    let explorations: Vec<_> = std::fs::read_dir(store.path().join("explore"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(explorations.len(), 1);
    let dir = &explorations[0];
    let ex: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("explore.json")).unwrap()).unwrap();
    assert_eq!(ex["found_class"], "lock-bug", "{ex:#}");
    assert_eq!(ex["done"], true);
    assert_eq!(ex["version"], 2, "the store's record, with workload shapes");
    assert_eq!(ex["workload_drawn"], true);
    // Each run's scenario file is the schedule it ran: the drawn shape included.
    for t in ex["tries"].as_array().unwrap() {
        let w = &t["schedule"]["workload"];
        let file = std::fs::read_to_string(t["file"].as_str().unwrap()).unwrap();
        let hold = format!("hold_ms = [{}, {}]", w["hold_ms"][0], w["hold_ms"][1]);
        assert!(file.contains(&hold), "{hold} in {file}");
        let clients = format!("clients = {}", t["schedule"]["clients"]);
        assert!(file.contains(&clients), "{clients} in {file}");
    }
    // Runs go two at a time (the default --jobs), yet explore.json lists them numbered
    // 1, 2, 3, … in order, each with a run folder of its own.
    let numbers: Vec<u64> = ex["tries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["n"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, (1..=numbers.len() as u64).collect::<Vec<_>>());
    let mut runs: Vec<&str> = ex["tries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["run"].as_str())
        .collect();
    runs.sort_unstable();
    runs.dedup();
    assert_eq!(runs.len(), numbers.len(), "a folder per run");
    // Every run of the search is an ordinary stored run with its report.
    for t in ex["tries"].as_array().unwrap() {
        let run = Path::new(t["run"].as_str().expect("every run ran"));
        assert!(run.join("results.json").is_file(), "{run:?}");
        assert!(run.join("report.html").is_file() || run.join("history.jsonl").is_file());
    }
    assert!(dir.join("explore.html").is_file());
    let shrunk = &ex["shrunk"];
    let file = shrunk["file"].as_str().unwrap();
    assert!(
        file.starts_with(store_arg),
        "written under the store: {file}"
    );
    assert_eq!(shrunk["runs"], 2, "{shrunk:#}");
    // The confirming runs hold the rate each step was kept at (1/1: both), or every kept change
    // was undone and the schedule is the one found.
    let found = &ex["tries"][ex["found"].as_u64().unwrap() as usize - 1];
    assert!(
        shrunk["hits"] == 2 || shrunk["schedule"] == found["schedule"],
        "{shrunk:#}"
    );
    let body = std::fs::read_to_string(file).unwrap();
    assert!(body.contains("expected = \"invalid\""), "{body}");
    assert!(body.starts_with("# Shrunk by `lockpick explore`"), "{body}");
    // A budget that ran out is said on a line of its own, not listed as a change removed.
    let ran_out = shrunk["budget_ran_out"]
        .as_bool()
        .expect("budget_ran_out recorded");
    assert_eq!(
        body.contains("Shrinking stopped when its budget"),
        ran_out,
        "{body}"
    );
    assert!(
        !body.contains("#   - ("),
        "only changes listed as removed: {body}"
    );
    assert!(text.contains(&format!("repeat:   cargo run -- scenario {file} --seed")));
    // The shrunk file is a scenario like any other.
    let seed = shrunk["seed"].as_u64().unwrap().to_string();
    let run = lockpick(&["scenario", file, "--seed", &seed, "--store", store_arg]);
    let run_err = stderr(&run);
    assert!(
        matches!(run.status.code(), Some(0 | 1)),
        "a verdict, not bad input or a harness failure: {run_err}"
    );
    assert!(
        run_err.contains("toy-check-then-set-baseline-shrunk"),
        "{run_err}"
    );
}

#[test]
fn bad_arguments_are_refused_with_what_is_allowed() {
    let store = tempfile::tempdir().unwrap();
    let store_arg = store.path().to_str().unwrap();
    let out = lockpick(&[
        "explore",
        "toy-check-then-set-baseline",
        "--faults",
        "latency,nope",
        "--store",
        store_arg,
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("unknown fault \"nope\"; allowed: client-pause"),
        "{}",
        stderr(&out)
    );
    let out = lockpick(&["explore", "toy-check-then-set-baseline", "--repro", "6/5"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("allowed: K/N"), "{}", stderr(&out));
    let out = lockpick(&["explore", "toy-check-then-set-baseline", "--budget", "10x"]);
    assert_eq!(out.status.code(), Some(3), "bad input");
    assert!(
        stderr(&out).contains("allowed: seconds"),
        "{}",
        stderr(&out)
    );
    assert!(!store.path().join("explore").exists(), "nothing written");
}
