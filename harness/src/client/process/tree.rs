//! Every adapter runs as PID 1 of a PID namespace of its own, so that nothing it starts — a
//! shell wrapper's child, a helper process the library forks, a grandchild that ignores
//! SIGTERM or calls `setsid()` — outlives it or lockpick, on any exit path.
//!
//! Why a PID namespace and not the alternatives:
//! - PDEATHSIG alone reaches only the process lockpick forked: an adapter's own children
//!   (a wrapper script's interpreter, a library's helper processes) are reparented and live
//!   on, stopped ones forever.
//! - A process group is left by any child that calls `setsid()`/`setpgid()`, and killing it
//!   needs someone alive to do the killing: after SIGKILL of lockpick nobody is.
//! - A cgroup (`cgroup.kill`) needs a delegated, writable cgroup v2 subtree, which a
//!   container or an unprivileged user often does not have, and still someone to write to it.
//! - A PID namespace needs neither: when its init dies, the kernel SIGKILLs every other
//!   process in it, stopped ones included, and no process can leave its namespace. The chain
//!   is the one PostgreSQL already runs in ([`crate::processes::pid_namespace`]): lockpick forks
//!   `unshare --pid --fork --kill-child` on its spawner thread (PDEATHSIG = SIGKILL), and
//!   unshare gives the adapter PDEATHSIG = SIGKILL in turn. So SIGKILL of lockpick kills
//!   unshare, which kills the adapter, which ends the namespace; a retired or crashed adapter
//!   (SIGKILL of unshare by the registry, which also signals every descendant) goes the same
//!   way. Not as root, a user namespace mapping lockpick's user to itself gives the right to
//!   make the PID namespace.
//!
//! A pause (SIGSTOP) reaches the whole tree: the registry stops the pid it spawned and every
//! process below it, the adapter's children included.

use crate::processes::{find_binary, pid_namespace};
use std::path::Path;
use std::process::Command;

/// The command that runs `program args…` as PID 1 of a new PID namespace.
pub(super) fn command(program: &Path, args: &[String]) -> Command {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let mut command = Command::new(pid_namespace::UNSHARE);
    if !root {
        command.args(["--user", "--map-current-user"]);
    }
    command
        .args(["--pid", "--fork", "--kill-child", "--"])
        .arg(program)
        .args(args);
    command
}

/// Checks that `unshare` is installed, naming its package.
pub(super) fn check_installed() -> Result<(), String> {
    match find_binary(Path::new(pid_namespace::UNSHARE)) {
        Some(_) => Ok(()),
        None => Err(format!(
            "`{}`, which runs each adapter in a PID namespace of its own so that nothing it \
             starts outlives lockpick, is not installed (install the Debian package `{}`)",
            pid_namespace::UNSHARE,
            pid_namespace::PACKAGE
        )),
    }
}
