//! `lockpick gc`: frees the disk that finished and abandoned runs no longer need. Node data
//! (`nodes/<node>/data`: etcd's preallocated WAL, ZooKeeper snapshots, AOF files) goes;
//! histories, results, reports, scenarios, schedules, run records and node configs and logs
//! stay. Runs whose lockpick is still running are left alone.

use super::run_state::{RunState, RunStatus};
use std::path::{Path, PathBuf};

/// What [`collect`] freed.
#[derive(Debug, Default)]
pub struct GcReport {
    /// Node data folders removed, with their size in bytes.
    pub removed: Vec<(PathBuf, u64)>,
    /// Temporary files of interrupted whole-file writes removed.
    pub temp_files: Vec<PathBuf>,
    /// Runs skipped because their lockpick is still running.
    pub running: Vec<PathBuf>,
    /// Folders that could not be cleaned, with why.
    pub errors: Vec<String>,
}

impl GcReport {
    pub fn freed_bytes(&self) -> u64 {
        self.removed.iter().map(|(_, b)| b).sum()
    }
}

/// Cleans every run folder `store/<scenario>/<run-id>` (symlinks such as `latest` are not
/// followed).
pub fn collect(store: &Path) -> GcReport {
    let mut report = GcReport::default();
    for scenario in real_dirs(store) {
        for run in real_dirs(&scenario) {
            collect_run(&run, &mut report);
        }
    }
    report
}

fn collect_run(run: &Path, report: &mut GcReport) {
    match RunState::read(run) {
        Ok(Some(state)) if matches!(state.status(), RunStatus::Running(_)) => {
            report.running.push(run.to_owned());
            return;
        }
        // A folder without a record is a run stored before run.json, long finished, or not a
        // run at all: only a `nodes/*/data` inside it is touched.
        Ok(_) => {}
        Err(e) => {
            report.errors.push(format!("{}: {e}", run.display()));
            return;
        }
    }
    for node in real_dirs(&run.join("nodes")) {
        let data = node.join("data");
        if !is_real_dir(&data) {
            continue;
        }
        let size = tree_size(&data);
        match std::fs::remove_dir_all(&data) {
            Ok(()) => report.removed.push((data, size)),
            Err(e) => report
                .errors
                .push(format!("remove {}: {e}", data.display())),
        }
    }
    // Leftovers of a write cut short (`.<name>.tmp-<pid>-<n>`, see super::atomic).
    let Ok(entries) = std::fs::read_dir(run) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.')
            && name.contains(".tmp-")
            && std::fs::remove_file(entry.path()).is_ok()
        {
            report.temp_files.push(entry.path());
        }
    }
}

fn is_real_dir(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
}

/// Sub-folders of `dir` that are folders themselves, not links to one, sorted.
fn real_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Bytes allocated on disk below `dir` (etcd's WAL is preallocated, so its length and its
/// allocation agree), links not followed.
fn tree_size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => tree_size(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_state::{Ended, Phase};
    use lockpick_checker::verdict::Verdict;

    fn run_folder(store: &Path, id: &str, state: Option<RunState>) -> PathBuf {
        let run = store.join("s").join(id);
        std::fs::create_dir_all(run.join("nodes/n1/data")).unwrap();
        std::fs::write(run.join("nodes/n1/data/wal"), vec![0u8; 1000]).unwrap();
        std::fs::write(run.join("nodes/n1/node.log"), b"log").unwrap();
        std::fs::write(run.join("history.jsonl"), b"").unwrap();
        if let Some(s) = state {
            s.write(&run).unwrap();
        }
        run
    }

    #[test]
    fn frees_node_data_of_finished_and_abandoned_runs_only() {
        let store = tempfile::tempdir().unwrap();
        let mut finished = RunState::new("t".into(), "0");
        finished.phase = Phase::Done;
        finished.ended = Some(Ended::Checked {
            verdict: Verdict::Valid,
            interrupted_by: None,
        });
        let mut abandoned = RunState::new("t".into(), "0");
        abandoned.pid = 4_194_305 + 11;
        abandoned.phase = Phase::Workload;
        let running = RunState::new("t".into(), "0");
        let a = run_folder(store.path(), "a", Some(finished));
        let b = run_folder(store.path(), "b", Some(abandoned));
        let c = run_folder(store.path(), "c", Some(running));
        let old = run_folder(store.path(), "d", None);
        std::fs::write(a.join(".results.json.tmp-1-0"), b"{").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("a", store.path().join("s/latest")).unwrap();

        let report = collect(store.path());
        assert_eq!(report.freed_bytes(), 3000, "{report:?}");
        assert_eq!(report.running, vec![c.clone()]);
        assert_eq!(report.temp_files.len(), 1);
        for run in [&a, &b, &old] {
            assert!(!run.join("nodes/n1/data").exists());
            assert!(run.join("nodes/n1/node.log").exists());
            assert!(run.join("history.jsonl").exists());
        }
        assert!(c.join("nodes/n1/data/wal").exists());
    }
}
