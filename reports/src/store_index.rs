//! The index of a store (what `lockpick serve` shows at `/`): every stored run with its
//! scenario, backend, time, seed and verdict, and every comparison, newest first.

use crate::error::ReportError;
use crate::run_report::read_results;
use crate::templates::render;
use lockpick_store::{seed_of, RunState, RunStatus, LATEST};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Folder of the store that holds comparisons, beside the scenarios' folders.
pub const COMPARE_DIR: &str = "compare";

/// One stored run, as the index lists it.
#[derive(Debug, Clone, Serialize)]
pub struct StoredRun {
    /// Path relative to the store root, with `/` separators: `<scenario>/<run-id>`.
    pub path: String,
    pub scenario: String,
    pub backend: String,
    /// The library an adapter ran (`Redisson 3.52.0`), if recorded.
    pub library: Option<String>,
    pub seed: u64,
    /// `YYYY-MM-DD HH:MM:SS UTC`, from the run id.
    pub time: String,
    pub verdict: String,
    pub expected: Option<String>,
    pub ops: u64,
    pub violations: u64,
    pub has_report: bool,
    pub has_results: bool,
    /// For a run that did not end with a check: what happened, e.g. "interrupted during
    /// workload: …" or "nothing ran: …" (from its `run.json`).
    pub status: Option<String>,
}

#[derive(Debug, Serialize)]
struct Page {
    store: String,
    runs: Vec<StoredRun>,
    unreadable: Vec<String>,
    compares: Vec<String>,
    /// `explore/<id>` of each exploration with a page, newest first.
    explorations: Vec<String>,
}

/// Every run under `store` (folders `<scenario>/<run-id>` with a `results.json` or a
/// `run.json`), newest first, and the folders whose records could not be read. A run that was
/// interrupted before its results were written is listed with what happened, not as
/// unreadable.
pub fn list_runs(store: &Path) -> (Vec<StoredRun>, Vec<String>) {
    let mut runs = Vec::new();
    let mut unreadable = Vec::new();
    for scenario in sorted_dirs(store) {
        let Some(scenario_name) = file_name(&scenario) else {
            continue;
        };
        if scenario_name == COMPARE_DIR
            || scenario_name == crate::suite_record::SUITE_DIR
            || scenario_name == crate::explore::EXPLORE_DIR
        {
            continue;
        }
        for run in sorted_dirs(&scenario) {
            let Some(id) = file_name(&run) else { continue };
            // `latest` is a link to a run listed under its own name.
            if id == LATEST {
                continue;
            }
            let path = format!("{scenario_name}/{id}");
            let state = match RunState::read(&run) {
                Ok(s) => s,
                Err(e) => {
                    unreadable.push(format!("{path}: {e}"));
                    continue;
                }
            };
            let status = state.as_ref().and_then(RunState::incomplete_sentence);
            if let (Some(status), Some(state)) = (status, &state) {
                let verdict = match state.status() {
                    RunStatus::Running(_) => "running",
                    _ if state.phase.workload_ran() => "interrupted",
                    _ => "nothing-ran",
                };
                runs.push(StoredRun {
                    path,
                    scenario: scenario_name.clone(),
                    backend: "—".to_owned(),
                    library: None,
                    seed: seed_of(&id),
                    time: stamp_time(&id),
                    verdict: verdict.to_owned(),
                    expected: None,
                    ops: 0,
                    violations: 0,
                    has_report: run.join("report.html").is_file(),
                    has_results: false,
                    status: Some(status),
                });
                continue;
            }
            if !run.join("results.json").is_file() {
                continue;
            }
            match read_results(&run) {
                Ok(r) => runs.push(StoredRun {
                    path,
                    scenario: r.scenario,
                    backend: r.backend,
                    library: r.library,
                    seed: r.seed,
                    time: stamp_time(&id),
                    verdict: r.verdict.name().to_owned(),
                    expected: r.expected.map(|e| e.name().to_owned()),
                    ops: r.ops,
                    violations: r.lock.violations.len() as u64 + r.lock.omitted_violations,
                    has_report: run.join("report.html").is_file(),
                    has_results: true,
                    status: r.interrupted.then(|| {
                        "workload cut short by a signal; what was recorded was checked".to_owned()
                    }),
                }),
                Err(e) => unreadable.push(format!("{path}: {e}")),
            }
        }
    }
    runs.sort_by(|a, b| b.time.cmp(&a.time).then(a.path.cmp(&b.path)));
    (runs, unreadable)
}

/// Renders the index page of `store`. Links are URL paths from the store root.
pub fn render_index(store: &Path) -> Result<String, ReportError> {
    let (runs, unreadable) = list_runs(store);
    let mut compares: Vec<String> = sorted_dirs(&store.join(COMPARE_DIR))
        .into_iter()
        .filter(|d| d.join("compare.html").is_file())
        .filter_map(|d| file_name(&d))
        .map(|n| format!("{COMPARE_DIR}/{n}"))
        .collect();
    compares.reverse();
    render(
        "index.html",
        &Page {
            store: store.display().to_string(),
            runs,
            unreadable,
            compares,
            explorations: crate::explore::list_explorations(store),
        },
    )
}

fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn file_name(p: &Path) -> Option<String> {
    p.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// `20261121T233700Z-seed1` → `2026-11-21 23:37:00 UTC`; other names are shown as they are.
fn stamp_time(id: &str) -> String {
    let b = id.as_bytes();
    if b.len() >= 16 && b[8] == b'T' && b[15] == b'Z' && id[..8].bytes().all(|c| c.is_ascii_digit())
    {
        format!(
            "{}-{}-{} {}:{}:{} UTC",
            &id[0..4],
            &id[4..6],
            &id[6..8],
            &id[9..11],
            &id[11..13],
            &id[13..15]
        )
    } else {
        id.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_show_as_utc_times() {
        assert_eq!(
            stamp_time("20261121T233700Z-seed1"),
            "2026-11-21 23:37:00 UTC"
        );
        assert_eq!(stamp_time("odd"), "odd");
    }

    #[test]
    fn interrupted_runs_are_listed_with_what_happened_not_as_unreadable() {
        let store = tempfile::tempdir().unwrap();
        let killed = |id: &str, phase: lockpick_store::Phase| {
            let dir = store.path().join("redis-baseline").join(id);
            std::fs::create_dir_all(&dir).unwrap();
            let mut state = RunState::new("t".into(), "0");
            // A pid beyond the kernel's pid_max: its lockpick is gone.
            state.pid = 4_194_305 + 5;
            state.phase = phase;
            state.write(&dir).unwrap();
        };
        killed("20261121T233700Z-seed3", lockpick_store::Phase::Workload);
        killed(
            "20261121T233800Z-seed4",
            lockpick_store::Phase::ServersStarting,
        );
        let (runs, unreadable) = list_runs(store.path());
        assert!(unreadable.is_empty(), "{unreadable:?}");
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].verdict, "nothing-ran");
        assert!(runs[0]
            .status
            .as_deref()
            .unwrap()
            .starts_with("nothing ran"));
        assert_eq!(runs[1].verdict, "interrupted");
        assert_eq!(runs[1].seed, 3);
        assert!(runs[1]
            .status
            .as_deref()
            .unwrap()
            .starts_with("interrupted during workload"));
        let page = render_index(store.path()).unwrap();
        assert!(page.contains("interrupted during workload"), "{page}");
    }
}
