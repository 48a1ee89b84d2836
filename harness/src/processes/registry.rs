//! Process-wide registry of the live children the supervisor spawned, and the emergency stop.
//!
//! Every signal sent to a child goes through this registry while its lock is held, and a
//! child's pid leaves the registry (under the same lock) before it is reaped. So a signal can
//! never reach an unrelated process that reused the pid of an already reaped child.

use std::collections::BTreeSet;
use std::io;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long [`kill_all_children`] waits for the killed children to be reaped.
const EMERGENCY_REAP_WAIT: Duration = Duration::from_secs(2);

pub(crate) struct Registry {
    state: Mutex<State>,
    /// Signalled whenever a pid leaves the registry.
    removed: Condvar,
}

pub(crate) struct State {
    live: BTreeSet<u32>,
    /// Set by [`kill_all_children`]; no child may be spawned afterwards.
    shutting_down: bool,
}

impl State {
    pub(crate) fn shutting_down(&self) -> bool {
        self.shutting_down
    }

    pub(crate) fn insert(&mut self, pid: u32) {
        self.live.insert(pid);
    }
}

static REGISTRY: Registry = Registry {
    state: Mutex::new(State {
        live: BTreeSet::new(),
        shutting_down: false,
    }),
    removed: Condvar::new(),
};

/// Locks the registry. A panic elsewhere must not disable the emergency stop, hence the
/// poison is ignored: the set stays consistent because every critical section is tiny.
pub(crate) fn lock() -> MutexGuard<'static, State> {
    REGISTRY
        .state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Why a signal could not be delivered.
pub(crate) enum SignalFailure {
    NotRunning,
    Os(io::Error),
}

/// Sends `signal` to `pid` if, and only if, `pid` is a live registered child.
pub(crate) fn signal(pid: u32, signal: libc::c_int) -> Result<(), SignalFailure> {
    let state = lock();
    if !state.live.contains(&pid) {
        return Err(SignalFailure::NotRunning);
    }
    send(pid, signal).map_err(SignalFailure::Os)
}

/// Like [`signal`], for a child whose descendants were listed before (`known`): a stop reaches
/// them right after the child, before the look through `/proc` for any others (which takes
/// milliseconds), so a stop aimed inside a request of a few hundred microseconds lands when it
/// is due. The child is stopped first, so its own children cannot be reaped meanwhile.
pub(crate) fn signal_known(
    pid: u32,
    known: &[u32],
    signal: libc::c_int,
) -> Result<(), SignalFailure> {
    let state = lock();
    if !state.live.contains(&pid) {
        return Err(SignalFailure::NotRunning);
    }
    if signal == libc::SIGSTOP {
        kill(pid, libc::SIGSTOP).map_err(SignalFailure::Os)?;
        for &worker in known {
            let _ = kill(worker, libc::SIGSTOP);
        }
    }
    send(pid, signal).map_err(SignalFailure::Os)
}

/// Signals a registered child and every process below it. A server may fork workers that
/// leave its process group (PostgreSQL's backends call `setsid()`), so neither the pid nor the
/// group reaches them: a pause must stop them too, and a kill must not leave them behind.
/// The child is stopped first, so the workers' pids cannot be reaped and reused while they
/// are signalled (an exited worker stays a zombie of its stopped parent).
fn send(pid: u32, signal: libc::c_int) -> io::Result<()> {
    match signal {
        libc::SIGCONT => {
            for worker in descendants(pid) {
                let _ = kill(worker, libc::SIGCONT);
            }
            kill(pid, signal)
        }
        _ => {
            kill(pid, libc::SIGSTOP)?;
            for worker in descendants(pid) {
                let _ = kill(worker, signal);
            }
            kill(pid, signal)
        }
    }
}

fn kill(pid: u32, signal: libc::c_int) -> io::Result<()> {
    // SAFETY: kill(2) has no memory-safety preconditions; the pid is a registered child that
    // has not been reaped yet (the caller holds the registry lock), or one of its workers,
    // which cannot be reaped while that child is stopped.
    let rc = unsafe { libc::kill(pid as libc::pid_t, signal) };
    if rc == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Every process whose chain of parents leads to `root`, from /proc; empty for a server that
/// forks nothing. (Public for tests that look at a node's whole process tree.)
pub fn descendants(root: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let parents: Vec<(u32, u32)> = entries
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // "pid (comm) state ppid …": the command may hold spaces and parentheses.
            let ppid = stat[stat.rfind(')')? + 1..].split_whitespace().nth(1)?;
            Some((pid, ppid.parse().ok()?))
        })
        .collect();
    let mut found = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for &(pid, ppid) in &parents {
            if ppid == parent && pid != root && !found.contains(&pid) {
                found.push(pid);
                frontier.push(pid);
            }
        }
    }
    found
}

/// Removes `pid` and runs `reap` while still holding the lock, so no signal can be sent to the
/// pid between its removal and its reuse by the kernel.
pub(crate) fn remove_then<T>(pid: u32, reap: impl FnOnce() -> T) -> T {
    let mut state = lock();
    state.live.remove(&pid);
    let out = reap();
    drop(state);
    REGISTRY.removed.notify_all();
    out
}

/// Kills every child any supervisor of this process has spawned (SIGKILL), refuses any later
/// spawn, and waits up to two seconds for the children to be reaped.
///
/// Meant for the binary's SIGINT/SIGTERM handling, called from an ordinary thread (not from a
/// raw signal handler: it takes a mutex) right before the process exits. Safe to call more
/// than once and concurrently with supervisors that are still running; their later operations
/// fail with [`crate::processes::ProcessError::ShuttingDown`] or [`crate::processes::ProcessError::NotRunning`].
pub fn kill_all_children() {
    let mut state = lock();
    state.shutting_down = true;
    for &pid in &state.live {
        // A failure means the child is already dying; its reaper removes it.
        let _ = send(pid, libc::SIGKILL);
    }
    let deadline = Instant::now() + EMERGENCY_REAP_WAIT;
    while !state.live.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        state = REGISTRY
            .removed
            .wait_timeout(state, left)
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .0;
    }
}

/// The pids of every live child spawned by any supervisor of this process, e.g. to find
/// which member owns a socket.
pub fn live_children() -> Vec<u32> {
    lock().live.iter().copied().collect()
}
