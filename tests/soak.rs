//! `lockpick scenario NAME --soak DURATION` end to end on a real redis-server behind the
//! embedded proxy: the scenario's faults recur every cycle, the history checked as it was
//! written gives the same verdict and findings as `lockpick check` of the stored history
//! afterwards, `soak.json` holds the memory samples, and the report has the soak's section.

mod cli_support;

use cli_support::{lockpick, stderr};
use std::path::PathBuf;

/// The finding lines of a printed summary.
fn verdict_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| l.starts_with("VIOLATION") || l.starts_with("STUCK") || l.starts_with("…"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_soak_checks_its_history_as_it_goes_samples_memory_and_reports_the_whole() {
    let store = tempfile::tempdir().unwrap();
    let store_arg = store.path().to_str().unwrap();
    // redis-gc-pause: 6 s of workload with a client pause past the TTL; 13 s of soak is
    // three cycles of its schedule.
    let out = lockpick(&[
        "scenario",
        "redis-gc-pause",
        "--soak",
        "13s",
        "--seed",
        "2",
        "--store",
        store_arg,
    ]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = stderr(&out);
    assert!(
        matches!(out.status.code(), Some(0 | 1 | 8)),
        "a verdict: {text}\n{err}"
    );
    assert!(
        text.contains("reproduce: cargo run -- scenario redis-gc-pause --seed 2 --soak 13s"),
        "{text}"
    );
    let dir: PathBuf = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("store: "))
        .map(PathBuf::from)
        .expect("the run's folder");

    // The faults recur: the schedule has three cycles' client pauses.
    let schedule: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("schedule.json")).unwrap()).unwrap();
    let pauses = schedule
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s.to_string().contains("pause"))
        .count();
    let once: serde_json::Value = {
        let plain = tempfile::tempdir().unwrap();
        let out = lockpick(&[
            "scenario",
            "redis-gc-pause",
            "--seed",
            "2",
            "--store",
            plain.path().to_str().unwrap(),
        ]);
        let t = String::from_utf8_lossy(&out.stdout).into_owned();
        let d = t
            .lines()
            .find_map(|l| l.trim().strip_prefix("store: "))
            .map(PathBuf::from)
            .expect("the plain run's folder");
        serde_json::from_str(&std::fs::read_to_string(d.join("schedule.json")).unwrap()).unwrap()
    };
    let pauses_once = once
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s.to_string().contains("pause"))
        .count();
    assert!(pauses_once > 0, "{once}");
    assert!(
        pauses >= 2 * pauses_once,
        "{pauses} vs {pauses_once} in one run"
    );

    // The live check's verdict and findings are the offline check's, but for what the offline
    // one adds from the server's record (the run folder's server.jsonl), which a soak's live
    // check does not read: it would keep the whole record in memory.
    let check = lockpick(&["check", dir.to_str().unwrap()]);
    let checked = String::from_utf8_lossy(&check.stdout).into_owned();
    let live = verdict_lines(&text);
    assert!(!live.is_empty(), "{text}");
    assert!(
        !live.iter().any(|l| l.contains("; the server's record of")),
        "{text}"
    );
    let offline: Vec<String> = (verdict_lines(&checked).into_iter())
        .map(|l| match l.split_once("; the server's record of") {
            Some((head, _)) => head.to_owned(),
            None => l,
        })
        .collect();
    assert_eq!(live, offline, "live:\n{text}\noffline:\n{checked}");
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    let counted = results["lock"]["violations"].as_array().unwrap().len() as u64
        + results["lock"]["omitted_violations"].as_u64().unwrap_or(0);
    let verdict = results["verdict"].as_str().unwrap();
    assert!(
        checked.contains(&format!(
            "lock check (exclusive): {verdict} — {counted} violation(s)"
        )),
        "{verdict}, {counted} violations live; offline:\n{checked}"
    );

    let soak: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("soak.json")).unwrap()).unwrap();
    assert_eq!(soak["v"], 1);
    assert_eq!(soak["soak_ms"], 13_000);
    assert_eq!(soak["cycle_ms"], 6_000);
    assert_eq!(soak["checked_live"], true);
    assert_eq!(soak["complete"], true);
    let samples = soak["samples"].as_array().unwrap();
    // One every 10 s of workload, and one at its end.
    assert_eq!(samples.len(), 2, "{soak:#}");
    assert!(samples.iter().all(|s| s["rss_mib"].as_f64().unwrap() > 0.0));
    let report = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(report.contains("id=\"soak\""), "the soak's section");
    assert!(report.contains("3 cycles"), "13 s of 6 s cycles");
}
