//! The one long-lived thread that forks every child.
//!
//! Children get `PR_SET_PDEATHSIG = SIGKILL` so that they die when lockpick is SIGKILLed and
//! cannot run cleanup. The kernel fires that signal when the *thread* that forked the child
//! exits, not the process. tokio's blocking-pool threads exit after ~10 s idle and async
//! tasks migrate between workers, so forking from whatever thread happens to call would kill
//! nodes at random. Forking from a dedicated thread that never exits avoids that.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{ChildStdin, ChildStdout, Command};
use std::sync::mpsc;
use std::sync::OnceLock;
use std::thread;

use tokio::sync::oneshot;

use super::child::Child;
use super::registry;

/// Why [`spawn`] did not produce a child.
pub(crate) enum SpawnFailure {
    ShuttingDown,
    Io(io::Error),
}

/// A spawned child with the pipes its caller asked for (`Stdio::piped()`); `None` for the
/// streams that were not piped.
pub(crate) struct Spawned {
    pub(crate) child: Child,
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) stdout: Option<ChildStdout>,
}

struct Request {
    command: Command,
    reply: oneshot::Sender<Result<Spawned, SpawnFailure>>,
}

static SPAWNER: OnceLock<mpsc::Sender<Request>> = OnceLock::new();

fn spawner() -> io::Result<mpsc::Sender<Request>> {
    if let Some(tx) = SPAWNER.get() {
        return Ok(tx.clone());
    }
    let (tx, rx) = mpsc::channel::<Request>();
    // Two callers may race here; the loser's thread ends when its sender is dropped, and it
    // never forked anything, so its exit is harmless.
    thread::Builder::new()
        .name("lockpick-spawner".into())
        .spawn(move || {
            for request in rx {
                let result = spawn_here(request.command);
                if let Err(Ok(spawned)) = request.reply.send(result) {
                    // The caller went away (its future was dropped): do not leak the node.
                    let _ = registry::signal(spawned.child.pid(), libc::SIGKILL);
                }
            }
        })?;
    Ok(SPAWNER.get_or_init(|| tx).clone())
}

/// Spawns `command` on the spawner thread, in its own process group, with PDEATHSIG set, and
/// registers it. Its stdio must already be configured by the caller.
pub(crate) async fn spawn(command: Command) -> Result<Child, SpawnFailure> {
    spawn_piped(command).await.map(|spawned| spawned.child)
}

/// Like [`spawn`], handing back the stdin and stdout pipes the caller configured.
pub(crate) async fn spawn_piped(command: Command) -> Result<Spawned, SpawnFailure> {
    let tx = spawner().map_err(SpawnFailure::Io)?;
    let (reply, rx) = oneshot::channel();
    tx.send(Request { command, reply })
        .map_err(|_| SpawnFailure::Io(io::Error::other("spawner thread is gone")))?;
    rx.await
        .map_err(|_| SpawnFailure::Io(io::Error::other("spawner thread dropped the request")))?
}

fn spawn_here(mut command: Command) -> Result<Spawned, SpawnFailure> {
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure runs in the forked child before exec and only makes
    // async-signal-safe system calls (prctl, getppid, setpgid); it allocates nothing.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) == -1
            {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died between fork and prctl; then no signal will come.
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            // Own process group: a Ctrl-C on the terminal reaches lockpick only, which then
            // decides how the nodes end, instead of every node shutting down by itself.
            if libc::setpgid(0, 0) == -1 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    // Holding the registry lock across fork makes spawning atomic with kill_all_children:
    // a child either is registered before the emergency stop looks, or is never spawned.
    let mut state = registry::lock();
    if state.shutting_down() {
        return Err(SpawnFailure::ShuttingDown);
    }
    let mut child = command.spawn().map_err(SpawnFailure::Io)?;
    let pid = child.id();
    state.insert(pid);
    drop(state);
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    // The std handle is dropped on purpose: our reaper thread waits for the pid instead.
    drop(child);
    let child = Child::watch(pid).map_err(|err| {
        // Without a reaper we could never wait for it: kill it now rather than leak it.
        let _ = registry::signal(pid, libc::SIGKILL);
        SpawnFailure::Io(err)
    })?;
    Ok(Spawned {
        child,
        stdin,
        stdout,
    })
}
