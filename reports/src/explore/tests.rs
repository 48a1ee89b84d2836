//! The explore page from a hand-written `explore.json`.

use super::*;

fn json(store: &Path) -> String {
    let run = store.join("toy-explore/20261125T180000Z-seed3");
    serde_json::json!({
        "id": "toy-20261125T180000Z-seed1", "dir": "x", "base": "toy", "base_file": "scenarios/toy.toml",
        "seed": 1, "budget_s": 600.0, "shrink_budget_s": 600.0, "need": {"k": 4, "n": 5},
        "lease_ms": 1000, "faults": ["client-pause", "latency"],
        "left_out": [{"fault": "failover", "reason": "no replica"}],
        "version": 2, "workload_drawn": true,
        "tries": [
            {"n": 1, "phase": "search", "seed": 1, "schedule": {"faults": [{"fault": "latency", "at_ms": 100, "size_ms": 350, "node": "n1"}], "clients": 4, "duration_ms": 5000,
             "workload": {"hold_ms": [300, 600], "think_ms": [0, 40], "watchdog": true}},
             "file": "f1.toml", "run": run, "verdict": "invalid", "found": "lock-bug",
             "finding": "processes 2 and 1 <both> believed", "error": null, "at_s": 9.0},
            {"n": 2, "phase": "search", "seed": 2, "schedule": {"faults": [{"fault": "client-crash", "at_ms": 100, "size_ms": 0}], "clients": 4, "duration_ms": 5000},
             "file": "f2.toml", "run": null, "verdict": null, "found": "nothing",
             "finding": null, "error": "redis did not start", "at_s": 12.0}
        ],
        "found": 1, "found_class": "lock-bug", "found_about": "the lock granted what it must not",
        "shrink": [{"change": "dropped latency", "schedule": {"faults": [], "clients": 4, "duration_ms": 5000}, "hits": 0, "runs": 2, "kept": false}],
        "shrunk": {"file": "nowhere.toml", "schedule": {"faults": [{"fault": "latency", "at_ms": 100, "size_ms": 350}], "clients": 2, "duration_ms": 3000,
                   "workload": {"hold_ms": [150, 300], "think_ms": [0, 10], "watchdog": true}},
                   "hits": 9, "runs": 10, "seed": 3, "command": "cargo run -- scenario nowhere.toml --seed 3", "removed": [],
                   "shrunk": true, "budget_ran_out": true},
        "stopped": "run 1 found a bug of the lock", "elapsed_s": 100.0, "done": true
    })
    .to_string()
}

#[test]
fn the_page_shows_what_was_tried_the_find_the_shrink_steps_and_the_rate() {
    let store = tempfile::tempdir().unwrap();
    let dir = store
        .path()
        .join(EXPLORE_DIR)
        .join("toy-20261125T180000Z-seed1");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("explore.json"), json(store.path())).unwrap();
    // The run that found it, with the command its results name (issue 38: the page says how
    // to repeat the find before shrinking ends).
    let run = store.path().join("toy-explore/20261125T180000Z-seed3");
    std::fs::create_dir_all(&run).unwrap();
    let lock = lockpick_checker::lock::check_locks(
        &[],
        &lockpick_checker::lock::LockCheckParams {
            property: lockpick_checker::lock::Property::Exclusive,
            deadlock_ms: 0,
        },
    );
    let results = lockpick_checker::results::RunResults {
        v: lockpick_checker::results::RESULTS_VERSION,
        scenario: "f1".into(),
        backend: "redis".into(),
        seed: 1,
        verdict: lockpick_checker::verdict::Verdict::Invalid,
        expected: None,
        interrupted: false,
        workload_ms: 1,
        ops: 0,
        history: "history.jsonl".into(),
        reproduce: "lockpick scenario f1.toml --seed 1 --store s".into(),
        lock,
        linearizability: None,
        not_exposed: None,
        exposed_by: None,
        exposures: None,
        server: None,
        discipline: None,
        library: None,
        description: None,
    };
    std::fs::write(
        run.join("results.json"),
        serde_json::to_string(&results).unwrap(),
    )
    .unwrap();
    let page = write_explore_page(&dir).unwrap();
    let html = std::fs::read_to_string(page).unwrap();
    assert!(
        html.contains(r#"<pre id="found-repeat" class="command">lockpick scenario f1.toml --seed 1 --store s</pre>"#),
        "{html}"
    );
    // One dot per fault of each search run, coloured by what it found.
    assert_eq!(html.matches("<circle").count(), 2, "{html}");
    assert!(html.contains(r##"fill="#c62828""##), "the lock bug's dot");
    assert!(html.contains(r##"fill="#9e9e9e""##), "the failed run's dot");
    assert!(html.contains("0.35× lease"), "{html}");
    // The finding is escaped, the run linked from the store's root (`/` escaped, as every
    // page's links are).
    assert!(html.contains("processes 2 and 1 &lt;both&gt; believed"));
    assert!(
        html.contains(r#"href="&#x2f;toy-explore&#x2f;20261125T180000Z-seed3/report.html""#),
        "{html}"
    );
    assert!(html.contains("<td class=\"num\">0/2</td>"));
    assert!(html.contains("reproduced in <b>9/10</b> runs"));
    assert!(
        html.contains("<b>Shrinking stopped at its budget</b> (600 s)"),
        "{html}"
    );
    assert!(html.contains("cargo run -- scenario nowhere.toml --seed 3"));
    assert!(html.contains("Left out: failover (no replica)"));
    // The drawn workload shape: in the run's row and in the shrunk schedule.
    assert!(html.contains("and the workload's shape (hold"), "{html}");
    assert!(
        html.contains("hold 300-600 ms, think 0-40 ms, watchdog on, 4 clients"),
        "{html}"
    );
    assert!(
        html.contains("2 clients, 3000 ms, hold 150-300 ms, think 0-10 ms, watchdog on;"),
        "{html}"
    );
    // And the store's index links it.
    assert_eq!(
        list_explorations(store.path()),
        vec!["explore/toy-20261125T180000Z-seed1".to_owned()]
    );
    let index = crate::render_index(store.path()).unwrap();
    assert!(
        index.contains("explore&#x2f;toy-20261125T180000Z-seed1/explore.html"),
        "{index}"
    );
}

#[test]
fn an_unreadable_exploration_names_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let err = write_explore_page(dir.path()).unwrap_err().to_string();
    assert!(err.contains("explore.json"), "{err}");
}
