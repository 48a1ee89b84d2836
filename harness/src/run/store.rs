//! A run's place in the store: its folder made under the store's layout (see
//! [`lockpick_store`]), and its state record (`run.json`) kept current as the run moves through
//! its phases.

use super::error::RunError;
pub use lockpick_store::utc_stamp;
use lockpick_store::{link_atomic, run_id, write_atomic, Ended, Phase, RunState, LATEST};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// Test hook: with `LOCKPICK_TEST_STOP_AT=<phase>` a run stops itself (SIGSTOP) right after
/// recording that it reached `<phase>`, so a test can kill it there without guessing times.
pub const STOP_AT_ENV: &str = "LOCKPICK_TEST_STOP_AT";

/// Creates a fresh run folder under `root/<scenario>/` and points `latest` at it.
pub fn create_run_dir(root: &Path, scenario: &str, seed: u64) -> Result<PathBuf, RunError> {
    let parent = root.join(scenario);
    let stamp = utc_stamp(SystemTime::now());
    let mut n = 0;
    let dir = loop {
        let dir = parent.join(run_id(&stamp, seed, n));
        std::fs::create_dir_all(&parent).map_err(|e| RunError::store(&parent, e))?;
        match std::fs::create_dir(&dir) {
            Ok(()) => break dir,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
            Err(e) => return Err(RunError::store(&dir, e)),
        }
    };
    // Best effort: a store on a file system without symlinks still works, just without it.
    let _ = link_atomic(
        Path::new(dir.file_name().unwrap_or_default()),
        &parent.join(LATEST),
    );
    Ok(dir)
}

/// Writes a file of the run folder whole or not at all (see [`lockpick_store::write_atomic`]).
/// Off the runtime: it fsyncs, which took 3 s under a build's writes and stood every run still.
pub(crate) fn write_store_file(path: &Path, bytes: &[u8]) -> Result<(), RunError> {
    crate::blocking::off_runtime(|| write_atomic(path, bytes)).map_err(|e| RunError::store(path, e))
}

/// The live state record of one run: every change is written to `run.json` at once.
#[derive(Clone)]
pub(crate) struct RunRecord {
    dir: PathBuf,
    state: Arc<Mutex<RunState>>,
    /// `--keep-data`: the nodes' data stays even when the run is killed.
    keep_data: bool,
}

/// Records of the runs in progress in this process, for [`mark_runs_killed`].
static ACTIVE: Mutex<Vec<RunRecord>> = Mutex::new(Vec::new());

impl RunRecord {
    /// Writes the first record (phase `created`) into the new run folder `dir`.
    pub(crate) fn create(dir: &Path, keep_data: bool) -> Result<RunRecord, RunError> {
        let state = RunState::new(utc_stamp(SystemTime::now()), crate::LOCKPICK_BUILD);
        let record = RunRecord {
            dir: dir.to_owned(),
            state: Arc::new(Mutex::new(state)),
            keep_data,
        };
        record.update(|_| {})?;
        lock(&ACTIVE).push(record.clone());
        record.stop_if_asked(Phase::Created);
        Ok(record)
    }

    /// Records that the run reached `phase`.
    pub(crate) fn advance(&self, phase: Phase) -> Result<(), RunError> {
        self.update(|s| s.phase = phase)?;
        self.stop_if_asked(phase);
        Ok(())
    }

    /// The last phase recorded.
    pub(crate) fn phase(&self) -> Phase {
        lock(&self.state).phase
    }

    /// Records how many server starts of this run were retried on a new port.
    pub(crate) fn set_bind_retries(&self, n: u64) {
        let _ = self.update(|s| s.bind_retries = n);
    }

    /// Records the lock servers' CPU time over the workload, node by node.
    pub(crate) fn set_server_cpu(&self, ms: std::collections::BTreeMap<String, u64>) {
        let _ = self.update(|s| s.server_cpu_ms = Some(ms));
    }

    /// Records how late the harness's runtime was at worst during the workload.
    pub(crate) fn set_runtime_stall(&self, stall: lockpick_store::RuntimeStall) {
        let _ = self.update(|s| s.runtime_stall = Some(stall));
    }

    /// Records which server instance the run uses.
    pub(crate) fn set_server_instance(&self, instance: lockpick_store::ServerInstance) {
        let _ = self.update(|s| s.server_instance = Some(instance));
    }

    /// The server instance recorded for the run, if any.
    pub(crate) fn server_instance(&self) -> Option<lockpick_store::ServerInstance> {
        lock(&self.state).server_instance.clone()
    }

    /// Records how the run ended; the run is no longer in progress.
    pub(crate) fn end(&self, phase: Phase, ended: Ended) -> Result<(), RunError> {
        lock(&ACTIVE).retain(|r| !Arc::ptr_eq(&r.state, &self.state));
        self.update(|s| {
            s.phase = phase;
            s.ended = Some(ended);
        })
    }

    /// Off the runtime, like every store write: it fsyncs.
    fn update(&self, change: impl FnOnce(&mut RunState)) -> Result<(), RunError> {
        let mut state = lock(&self.state);
        change(&mut state);
        crate::blocking::off_runtime(|| state.write(&self.dir))
            .map_err(|e| RunError::store(&self.dir.join(lockpick_store::RUN_STATE_FILE), io(e)))
    }

    fn stop_if_asked(&self, phase: Phase) {
        if std::env::var(STOP_AT_ENV).is_ok_and(|p| p == phase.name()) {
            // SAFETY: raise has no memory-safety preconditions.
            unsafe { libc::raise(libc::SIGSTOP) };
        }
    }
}

fn io(e: lockpick_store::StoreError) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Records in every run in progress that `signal` (a second SIGINT/SIGTERM) killed it, and
/// removes its nodes' data as a finished run's: for the emergency exit, which skips the
/// teardown and the check. Call it once the servers are dead
/// ([`crate::processes::kill_all_children`]).
pub fn mark_runs_killed(signal: &str) {
    let active: Vec<RunRecord> = lock(&ACTIVE).clone();
    for record in active {
        let _ = record.update(|s| {
            s.ended = Some(Ended::Killed {
                signal: signal.to_owned(),
            })
        });
        if !record.keep_data {
            discard_node_data(&record.dir);
        }
    }
    // Servers kept between runs keep their data in the folder of the run that started them.
    for dir in lock(&INSTANCE_DIRS).iter() {
        discard_node_data(dir);
    }
}

/// The run folders holding the node data of server instances that are up (see
/// `run/servers.rs`), whose data the emergency exit removes too: an instance that served
/// several runs keeps its nodes in the first one's folder, which is no longer in progress.
static INSTANCE_DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Notes that an instance with its nodes in run folder `dir` is up (`up`) or was torn down.
pub(crate) fn note_instance_dir(dir: &Path, up: bool) {
    let mut dirs = lock(&INSTANCE_DIRS);
    match dirs.iter().position(|d| d == dir) {
        Some(i) if !up => {
            dirs.remove(i);
        }
        None if up => dirs.push(dir.to_owned()),
        _ => {}
    }
}

/// Removes the stopped nodes' data folders, keeping their configs and logs: etcd alone
/// preallocates 64 MB of WAL per member, and a store of nightly runs would fill a disk.
pub(crate) fn discard_node_data(dir: &Path) {
    let Ok(nodes) = std::fs::read_dir(dir.join("nodes")) else {
        return;
    };
    for node in nodes.flatten() {
        let _ = std::fs::remove_dir_all(node.path().join("data"));
    }
}

/// The first SIGINT/SIGTERM of this process, noted by the binary's signal handling so a run
/// can say in `run.json` what interrupted it.
static INTERRUPT_SIGNAL: Mutex<Option<String>> = Mutex::new(None);

/// Notes that `signal` asked the runs to stop (kept: the first one).
pub fn note_interrupt(signal: &str) {
    lock(&INTERRUPT_SIGNAL).get_or_insert_with(|| signal.to_owned());
}

pub(crate) fn interrupt_signal() -> Option<String> {
    lock(&INTERRUPT_SIGNAL).clone()
}

/// A run folder `dir` as a path relative to the store `store`, `/`-separated (how records
/// and pages name runs); `None` when it is not under the store.
pub fn relative_run(store: &Path, dir: &Path) -> Option<String> {
    let rel = dir.strip_prefix(store).ok()?;
    Some(
        rel.components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/"),
    )
}
