//! The unprivileged user a server that refuses root runs as (PostgreSQL exits at once when its
//! effective uid is 0, and CI runs lockpick as root): the system user `lockpick-db`, created
//! by scripts/setup. Under any other uid the server simply runs as lockpick's own user.

use std::ffi::CString;
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

/// The system user scripts/setup creates for servers that refuse to run as root.
pub const SERVER_USER: &str = "lockpick-db";

/// A user and its primary group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Account {
    pub(crate) uid: u32,
    pub(crate) gid: u32,
}

/// Whom a server that refuses root runs as: `None` means "as lockpick itself" (not root).
pub(crate) fn server_account() -> Result<Option<Account>, String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    lookup(SERVER_USER).map(Some).ok_or_else(|| {
        format!(
            "find the system user `{SERVER_USER}`: PostgreSQL refuses to run as root, so lockpick \
             runs it as that user when started as root (create it with scripts/setup, or \
             `useradd --system --no-create-home --shell /usr/sbin/nologin {SERVER_USER}`)"
        )
    })
}

fn lookup(name: &str) -> Option<Account> {
    let name = CString::new(name).ok()?;
    // SAFETY: getpwnam reads a NUL-terminated string and returns a pointer into static
    // storage (or null), which is read at once; lockpick calls no other getpw* concurrently
    // on the same data it would need afterwards.
    let entry = unsafe { libc::getpwnam(name.as_ptr()) };
    if entry.is_null() {
        return None;
    }
    // SAFETY: non-null pointer returned by getpwnam, valid until the next getpw* call.
    let entry = unsafe { &*entry };
    Some(Account {
        uid: entry.pw_uid,
        gid: entry.pw_gid,
    })
}

/// Hands `path` (a file or an empty folder lockpick made) to `account`.
pub(crate) fn give(path: &Path, account: Account) -> io::Result<()> {
    std::os::unix::fs::chown(path, Some(account.uid), Some(account.gid))
}

/// Checks that `account` can reach `path` through every folder above it: a store inside a
/// home folder of mode 0700 (e.g. /root) cannot be entered by the server user, and the
/// server would fail later with a less clear message.
pub(crate) fn check_reachable(path: &Path, account: Account) -> Result<(), String> {
    for dir in path.ancestors().skip(1) {
        let Ok(meta) = dir.metadata() else { continue };
        let mode = meta.permissions().mode();
        let bit = if meta.uid() == account.uid {
            0o100
        } else if meta.gid() == account.gid {
            0o010
        } else {
            0o001
        };
        if mode & bit == 0 {
            return Err(format!(
                "let the server user `{SERVER_USER}` reach {}: {} (mode {:o}) is closed to it; \
                 put the store elsewhere (--store under /tmp or a shared folder) or open that \
                 folder with `chmod o+x`",
                path.display(),
                dir.display(),
                mode & 0o777
            ));
        }
    }
    Ok(())
}
