//! `run.json`: the state record of one run, written when its folder is born and rewritten
//! (whole, see [`super::atomic`]) at every phase. A run killed at any moment, SIGKILL
//! included, leaves a record of the last phase it reached; a reader that finds no end in it
//! and no live lockpick behind it knows the run was interrupted there. The format is
//! versioned here and nowhere else.

use super::atomic::write_atomic;
use crate::error::StoreError;
use lockpick_checker::verdict::Verdict;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// Version of the `run.json` format written by this build.
pub const RUN_STATE_VERSION: u32 = 1;
/// The state record's name in a run folder.
pub const RUN_STATE_FILE: &str = "run.json";

/// How far a run got, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// The folder exists with its scenario, schedule and an empty history; no server yet.
    Created,
    /// Servers and proxies are being started.
    ServersStarting,
    /// Clients and the nemesis are running; the history grows.
    Workload,
    /// The workload stopped; servers and proxies are being stopped.
    Teardown,
    /// The history is being checked and `results.json` written.
    Checking,
    /// `results.json` is written.
    Done,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Created => "created",
            Phase::ServersStarting => "servers-starting",
            Phase::Workload => "workload",
            Phase::Teardown => "teardown",
            Phase::Checking => "checking",
            Phase::Done => "done",
        }
    }

    /// Every phase, in order.
    pub const ALL: [Phase; 6] = [
        Phase::Created,
        Phase::ServersStarting,
        Phase::Workload,
        Phase::Teardown,
        Phase::Checking,
        Phase::Done,
    ];

    pub fn from_name(name: &str) -> Option<Phase> {
        Phase::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Whether any client operation could have run by this phase.
    pub fn workload_ran(self) -> bool {
        self >= Phase::Workload
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a run ended, when lockpick lived to say it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "how", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Ended {
    /// The history was checked and `results.json` written. `interrupted_by` names the signal
    /// (SIGINT, SIGTERM) that cut the workload short, if one did.
    Checked {
        verdict: Verdict,
        interrupted_by: Option<String>,
    },
    /// A second SIGINT/SIGTERM killed every server and exited at once: nothing was checked.
    Killed { signal: String },
    /// The harness failed (a server did not start, the store could not be written, …).
    HarnessError { message: String },
}

/// The content of `run.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunState {
    /// Format version, [`RUN_STATE_VERSION`] when written by this build.
    pub v: u32,
    /// When the run started, UTC `YYYYMMDDTHHMMSSZ`.
    pub started: String,
    /// The lockpick that ran it.
    pub lockpick_version: String,
    /// Its process id, and the process's start time in clock ticks after boot (from
    /// `/proc/<pid>/stat`), so a pid reused by another process is not taken for it.
    pub pid: u32,
    pub pid_start: Option<u64>,
    /// The last phase reached.
    pub phase: Phase,
    /// How it ended; absent while it runs, and forever if it was killed (SIGKILL).
    pub ended: Option<Ended>,
    /// How many times a server start was retried on a new port after "address in use", by
    /// the servers this run used since they started (runs sharing them count alike).
    #[serde(default)]
    pub bind_retries: u64,
    /// CPU milliseconds each lock server node (its whole process tree) used while the
    /// workload ran, from /proc: what the lock cost its servers. Absent for external servers,
    /// for runs that did not reach the workload's end, and in runs stored before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_ms: Option<std::collections::BTreeMap<String, u64>>,
    /// The lock servers this run used: one instance can serve several consecutive runs of
    /// a matrix row (kept up and reset in between), so a state leak between runs can be
    /// traced to the runs that shared it. Absent for a run that failed before its servers
    /// were up, and in runs stored before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_instance: Option<ServerInstance>,
    /// How late the harness's own runtime woke a 10 ms timer at worst while the workload ran:
    /// the clients are tasks on it, so a long delay is a time in which the run's timing was
    /// the harness's (a starved machine, blocking work), not the lock's. Absent for runs that
    /// did not reach the workload's end, and in runs stored before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_stall: Option<RuntimeStall>,
}

/// The longest delay of the harness's runtime in a workload ([`RunState::runtime_stall`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimeStall {
    /// The delay past the timer's due time, in milliseconds.
    pub longest_ms: u64,
    /// When the timer was set, on the history's clock (ms after the workload's start).
    pub at_ms: u64,
}

/// Which started servers a run used ([`RunState::server_instance`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerInstance {
    /// Unique on this machine: when the servers were started (UTC stamp), lockpick's pid and
    /// a count of instances in that process, e.g. `20261125T211200Z-4711-3`.
    pub id: String,
    /// The run folder (name) the instance was started in: its nodes' folders (data, logs)
    /// live there, not in the later runs it served.
    pub started_in: String,
    /// Each lock server node's process id when the run started.
    pub pids: std::collections::BTreeMap<String, u32>,
    /// Which run of the instance this is: 1 for the run that started it, 2 for the first
    /// run after a reset, …
    pub run: u32,
    /// How long resetting the servers before this run took (0 on the run that started them).
    pub reset_ms: u64,
    /// Of `reset_ms`, how long the members took to agree again first, when the run before
    /// stopped, cut off or restarted some of them (a `Settle` fault); absent when there was
    /// nothing to wait for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle_ms: Option<u64>,
    /// On the run that started the instance, why the servers an earlier run of the same
    /// process had up were not kept for it (a fault a reset cannot undo, a failed reset,
    /// another server setup); absent when there were none or fresh servers were asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_fresh: Option<String>,
}

/// What a reader makes of a run folder's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunStatus {
    /// lockpick said how it ended.
    Ended(Ended),
    /// Its lockpick is still running, in this phase.
    Running(Phase),
    /// Its lockpick is gone without saying how it ended (killed, e.g. SIGKILL or a crash).
    Abandoned(Phase),
}

impl RunState {
    /// The record of a run this process starts now.
    pub fn new(started: String, lockpick_version: &str) -> RunState {
        let pid = std::process::id();
        RunState {
            v: RUN_STATE_VERSION,
            started,
            lockpick_version: lockpick_version.to_owned(),
            pid,
            pid_start: process_start(pid),
            phase: Phase::Created,
            ended: None,
            bind_retries: 0,
            server_cpu_ms: None,
            server_instance: None,
            runtime_stall: None,
        }
    }

    /// Writes the record into run folder `dir`, whole or not at all.
    pub fn write(&self, dir: &Path) -> Result<(), StoreError> {
        let path = dir.join(RUN_STATE_FILE);
        let bytes = serde_json::to_vec_pretty(self).expect("run state serializes");
        write_atomic(&path, &bytes).map_err(|source| StoreError::Write { path, source })
    }

    /// Reads the record of run folder `dir`; `None` for a folder without one (runs stored
    /// before run.json existed).
    pub fn read(dir: &Path) -> Result<Option<RunState>, StoreError> {
        let path = dir.join(RUN_STATE_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(StoreError::Read { path, source }),
        };
        let state: RunState = serde_json::from_str(&text).map_err(|e| StoreError::Parse {
            path: path.clone(),
            message: e.to_string(),
        })?;
        if state.v > RUN_STATE_VERSION {
            return Err(StoreError::Parse {
                path,
                message: format!(
                    "format version {} is newer than this lockpick reads ({RUN_STATE_VERSION})",
                    state.v
                ),
            });
        }
        Ok(Some(state))
    }

    /// Whether the lockpick that wrote this record is still running.
    pub fn owner_alive(&self) -> bool {
        match process_start(self.pid) {
            None => false,
            Some(start) => self.pid_start.is_none_or(|s| s == start),
        }
    }

    pub fn status(&self) -> RunStatus {
        match &self.ended {
            Some(end) => RunStatus::Ended(end.clone()),
            None if self.owner_alive() => RunStatus::Running(self.phase),
            None => RunStatus::Abandoned(self.phase),
        }
    }

    /// One sentence for a run that did not end with a check, e.g. "interrupted during
    /// workload (lockpick pid 12 is gone)" or "nothing ran: …"; `None` for a checked run.
    pub fn incomplete_sentence(&self) -> Option<String> {
        let (phase, why) = match self.status() {
            RunStatus::Ended(Ended::Checked { .. }) => return None,
            RunStatus::Ended(Ended::Killed { signal }) => {
                (self.phase, format!("a second {signal} killed it"))
            }
            RunStatus::Ended(Ended::HarnessError { message }) => {
                (self.phase, format!("the harness failed to {message}"))
            }
            RunStatus::Running(phase) => {
                return Some(format!(
                    "still running (phase {phase}, lockpick pid {})",
                    self.pid
                ))
            }
            RunStatus::Abandoned(phase) => (
                phase,
                format!("lockpick pid {} is gone without finishing it", self.pid),
            ),
        };
        Some(if phase.workload_ran() {
            format!("interrupted during {phase}: {why}")
        } else {
            format!("nothing ran: stopped during {phase} before the workload: {why}")
        })
    }
}

/// The start time (clock ticks after boot) of process `pid`, `None` if there is none.
fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the parenthesised command name: the state is field 3 of the line,
    // starttime field 22. A zombie (killed, not yet reaped by its parent) is gone too.
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
    if matches!(fields.next()?, "Z" | "X") {
        return None;
    }
    fields.nth(18)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_tells_phases() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(RunState::read(dir.path()).unwrap(), None);
        let mut s = RunState::new("20261124T000000Z".into(), "0.1.0");
        assert!(s.pid_start.is_some());
        s.write(dir.path()).unwrap();
        assert_eq!(RunState::read(dir.path()).unwrap(), Some(s.clone()));
        assert_eq!(s.status(), RunStatus::Running(Phase::Created));
        // A pid that is not running: abandoned.
        s.pid = 4_194_305 + 9;
        assert_eq!(s.status(), RunStatus::Abandoned(Phase::Created));
        assert!(s.incomplete_sentence().unwrap().starts_with("nothing ran"));
        s.phase = Phase::Workload;
        assert!(s
            .incomplete_sentence()
            .unwrap()
            .starts_with("interrupted during workload"));
        s.ended = Some(Ended::Checked {
            verdict: Verdict::Valid,
            interrupted_by: None,
        });
        assert_eq!(s.incomplete_sentence(), None);
    }

    #[test]
    fn a_reused_pid_is_not_the_run_s_lockpick() {
        let mut s = RunState::new("x".into(), "0.1.0");
        s.pid_start = s.pid_start.map(|t| t + 1);
        assert!(!s.owner_alive());
    }

    #[test]
    fn phase_names_round_trip() {
        for p in Phase::ALL {
            assert_eq!(Phase::from_name(p.name()), Some(p));
            assert_eq!(
                serde_json::to_string(&p).unwrap(),
                format!("\"{}\"", p.name())
            );
        }
    }
}
