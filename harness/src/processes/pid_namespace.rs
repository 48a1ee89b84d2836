//! Runs a server that forks (PostgreSQL) as PID 1 of a PID namespace of its own, so that the
//! kernel ends its whole process tree with it, stopped processes included.
//!
//! Why: PDEATHSIG reaches only the process lockpick forked. When lockpick is SIGKILLed while
//! the node is paused (SIGSTOP of the whole tree), the postmaster dies of it, but its backends
//! (which call `setsid()`) stay stopped forever, orphaned. When the init of a PID namespace
//! dies, the kernel SIGKILLs every other process in it, and SIGKILL ends stopped processes too.
//!
//! The chain, all from util-linux: `unshare --pid --fork --kill-child` (lockpick's child, with
//! PDEATHSIG) forks the server's process into the new namespace and kills it when it dies
//! itself. As root the namespace's first process changes user with `setpriv`, which sets
//! PDEATHSIG again after the change (a change of credentials clears it). Not as root, a user
//! namespace mapping lockpick's own user to itself gives the right to make the PID namespace.
//! The last hop execs the server with `env`, so that only the server is preloaded with
//! libfaketime (the wrappers would otherwise each start a libfaketime of their own).

use super::preflight::find_binary;
use super::run_as::Account;
use std::path::Path;
use std::process::Command;

/// The Debian package of `unshare` and `setpriv` (essential: on every Debian system).
pub(crate) const PACKAGE: &str = "util-linux";
pub(crate) const UNSHARE: &str = "unshare";
const SETPRIV: &str = "setpriv";

/// Checks that the wrappers are installed.
pub(crate) fn check_installed() -> Result<(), String> {
    for tool in [UNSHARE, SETPRIV] {
        if find_binary(Path::new(tool)).is_none() {
            return Err(format!(
                "find `{tool}`, which runs postgres in a PID namespace of its own so that no \
                 backend outlives lockpick (install the Debian package `{PACKAGE}`)"
            ));
        }
    }
    Ok(())
}

/// The command that runs `server` as PID 1 of a new PID namespace, as `account` when lockpick
/// is root (`None`: as lockpick's user), with `preload` as its only `LD_PRELOAD`. The
/// server's own arguments are appended by the caller.
pub(crate) fn command(server: &Path, account: Option<Account>, preload: Option<&str>) -> Command {
    let mut command = Command::new(UNSHARE);
    match account {
        Some(account) => {
            command
                .args(["--pid", "--fork", "--kill-child", "--", SETPRIV])
                .arg(format!("--reuid={}", account.uid))
                .arg(format!("--regid={}", account.gid))
                .args(["--clear-groups", "--pdeathsig=KILL", "--"]);
        }
        None => {
            command.args([
                "--user",
                "--map-current-user",
                "--pid",
                "--fork",
                "--kill-child",
                "--",
            ]);
        }
    }
    command.arg("env");
    if let Some(preload) = preload {
        command.arg(format!("LD_PRELOAD={preload}"));
    }
    command.arg(server);
    command
}
