//! One spawned child process: its pid, the thread that reaps it, and how to wait for its exit.

use std::io;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::registry;

/// How a child ended, in words (e.g. "exit code 1", "signal 9").
pub(crate) type ExitDescription = String;

/// Handle to a live or exited child. Dropping it neither kills nor reaps: the reaper thread
/// always reaps, and killing is the supervisor's decision.
pub(crate) struct Child {
    pid: u32,
    exit: Arc<ExitCell>,
}

struct ExitCell {
    status: Mutex<Option<ExitDescription>>,
    cond: Condvar,
    watch: watch::Sender<Option<ExitDescription>>,
}

impl Child {
    /// Starts the reaper thread of a freshly spawned, already registered child.
    pub(crate) fn watch(pid: u32) -> io::Result<Child> {
        let exit = Arc::new(ExitCell {
            status: Mutex::new(None),
            cond: Condvar::new(),
            watch: watch::Sender::new(None),
        });
        let cell = exit.clone();
        thread::Builder::new()
            .name(format!("lockpick-reap-{pid}"))
            .spawn(move || reap(pid, |desc| cell.publish(desc)))?;
        Ok(Child { pid, exit })
    }

    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// Sends `signal` to the child if it is still a live registered child (never to a process
    /// that reused its pid).
    pub(crate) fn signal(&self, signal: libc::c_int) -> Result<(), registry::SignalFailure> {
        registry::signal(self.pid, signal)
    }

    /// How the child ended, or `None` while it has not been reaped.
    pub(crate) fn exit(&self) -> Option<ExitDescription> {
        self.exit.watch.borrow().clone()
    }

    /// Waits until the child has been reaped.
    pub(crate) async fn wait(&self) -> ExitDescription {
        let mut rx = self.exit.watch.subscribe();
        let seen = rx.wait_for(Option::is_some).await;
        match seen {
            Ok(desc) => desc.clone().unwrap_or_default(),
            // The sender lives in `self.exit`, which we hold, so the channel cannot close.
            Err(_) => unreachable!("exit channel closed while its sender is alive"),
        }
    }

    /// Blocks the calling thread until the child has been reaped or `timeout` passed.
    pub(crate) fn wait_blocking(&self, timeout: Duration) -> Option<ExitDescription> {
        let deadline = Instant::now() + timeout;
        let mut status = self.exit.status.lock().unwrap_or_else(|p| p.into_inner());
        while status.is_none() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            status = self
                .exit
                .cond
                .wait_timeout(status, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        status.clone()
    }
}

impl ExitCell {
    fn publish(&self, desc: ExitDescription) {
        *self.status.lock().unwrap_or_else(|p| p.into_inner()) = Some(desc.clone());
        self.cond.notify_all();
        self.watch.send_replace(Some(desc));
    }
}

/// Waits for `pid` to exit without reaping it, takes it out of the registry, then reaps it.
/// Two steps so that the registry never holds a pid the kernel may already have reused. The
/// exit is published while the registry is still locked, so whoever sees the registry empty
/// (`kill_all_children`) also sees every exit recorded.
fn reap(pid: u32, publish: impl FnOnce(ExitDescription)) {
    loop {
        // SAFETY: siginfo_t is plain data that waitid fills in; zeroed is a valid value.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid, writable siginfo_t for the duration of the call.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if rc == 0 {
            break;
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINTR) {
            // ECHILD: someone else reaped it; nothing is left to wait for.
            return registry::remove_then(pid, || publish(format!("unknown (waitid: {err})")));
        }
    }
    registry::remove_then(pid, || {
        let mut status: libc::c_int = 0;
        let desc = loop {
            // SAFETY: `status` is a valid, writable int; the child is a zombie, so this
            // returns at once.
            let rc = unsafe { libc::waitpid(pid as libc::pid_t, &mut status, 0) };
            if rc == pid as libc::pid_t {
                break describe(status);
            }
            let err = io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EINTR) {
                break format!("unknown (waitpid: {err})");
            }
        };
        publish(desc);
    })
}

fn describe(status: libc::c_int) -> ExitDescription {
    if libc::WIFEXITED(status) {
        format!("exit code {}", libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        format!("signal {}", libc::WTERMSIG(status))
    } else {
        format!("wait status {status:#x}")
    }
}
