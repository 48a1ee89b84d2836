//! Real clock faults on a node: the node runs under libfaketime with a per-node control file
//! the nemesis rewrites at runtime (jump forward or back, run fast or slow, reset), preloaded
//! after an allocator shim without which redis-server deadlocks at start; and the cleanup of
//! the shared-memory files libfaketime leaves behind when its process is killed.
//!
//! Facts measured with Debian redis-server 7.0.15 and libfaketime 0.9.10: a change to the
//! control file is seen within ~10 ms with `FAKETIME_NO_CACHE=1`; the monotonic clock must stay
//! real (`FAKETIME_DONT_FAKE_MONOTONIC=1`) or moving the clock back stalls redis's timers;
//! `FAKETIME_XRESET=1` makes a rate change start from the moment it is written instead of
//! jumping the clock by uptime × (rate − 1).

use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where Debian's `libfaketime` package installs the preload library.
pub const LIBFAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";
/// The Debian package that provides [`LIBFAKETIME`].
pub const LIBFAKETIME_PACKAGE: &str = "libfaketime";
/// Name of the control file in a node's folder.
pub const CONTROL_FILE: &str = "faketime.rc";

/// The allocator shim built from `native/alloc_shim.c` by the build script.
pub fn alloc_shim() -> &'static Path {
    Path::new(env!("LOCKPICK_ALLOC_SHIM"))
}

/// The control file of the node whose folder is `node_dir` (see `NodeInfo::dir`).
pub fn control_file(node_dir: &Path) -> PathBuf {
    node_dir.join(CONTROL_FILE)
}

/// A node's clock relative to real time: shifted by `offset_ms` and, optionally, running at
/// `rate_milli / 1000` times real speed from the moment it is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClockSetting {
    pub offset_ms: i64,
    pub rate_milli: Option<u64>,
}

impl ClockSetting {
    /// The real clock.
    pub const REAL: ClockSetting = ClockSetting {
        offset_ms: 0,
        rate_milli: None,
    };

    /// The control-file text libfaketime reads: `+1.500` or `-0.250 x10.000`.
    pub fn spec(&self) -> String {
        let sign = if self.offset_ms < 0 { '-' } else { '+' };
        let abs = self.offset_ms.unsigned_abs();
        let mut s = format!("{sign}{}.{:03}", abs / 1000, abs % 1000);
        if let Some(r) = self.rate_milli {
            s.push_str(&format!(" x{}.{:03}", r / 1000, r % 1000));
        }
        s
    }
}

/// Sets the clock of the node whose control file is `control`. Written to a temporary file
/// and renamed, so libfaketime never reads a half-written setting.
pub fn set_clock(control: &Path, setting: ClockSetting) -> io::Result<()> {
    let tmp = control.with_extension("rc.tmp");
    std::fs::write(&tmp, format!("{}\n", setting.spec()))?;
    std::fs::rename(&tmp, control)
}

/// Checks that the preload libraries exist, saying what to install otherwise.
pub(crate) fn check_installed() -> Result<(), String> {
    if !Path::new(LIBFAKETIME).is_file() {
        return Err(format!(
            "find {LIBFAKETIME} for clock faults (install the Debian package `{LIBFAKETIME_PACKAGE}`, e.g. with scripts/setup)"
        ));
    }
    if !alloc_shim().is_file() {
        return Err(format!(
            "find the allocator shim {} built with lockpick (rebuild lockpick)",
            alloc_shim().display()
        ));
    }
    Ok(())
}

/// Makes `command` run under libfaketime controlled by `control`. Precondition: `control`
/// exists (the node's config writer creates it with the real clock; a restarted node keeps
/// the clock it had).
pub(crate) fn prepare(command: &mut Command, control: &Path) {
    command.env("LD_PRELOAD", preload());
    clock_env(command, control);
}

/// The `LD_PRELOAD` value of a node under libfaketime: the allocator shim, then libfaketime.
pub(crate) fn preload() -> String {
    format!("{} {}", alloc_shim().display(), LIBFAKETIME)
}

/// libfaketime's settings for a node whose clock `control` sets, without the preload (for a
/// node started through wrappers that must not be preloaded themselves).
pub(crate) fn clock_env(command: &mut Command, control: &Path) {
    command
        .env("FAKETIME_TIMESTAMP_FILE", control)
        .env("FAKETIME_NO_CACHE", "1")
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
        .env("FAKETIME_XRESET", "1")
        // The allocator shim removes libfaketime's /dev/shm files at start (see alloc_shim.c).
        .env("LOCKPICK_FAKETIME_UNLINK", "1");
}

/// Removes the `/dev/shm` files (`faketime_shm_<pid>`, `sem.faketime_sem_<pid>`) of
/// libfaketime processes that are gone: a process killed with SIGKILL cannot remove its own.
/// Returns how many were removed.
pub fn clean_stale_shm() -> usize {
    clean_stale_shm_in(Path::new("/dev/shm"))
}

fn clean_stale_shm_in(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(pid) = ["faketime_shm_", "sem.faketime_sem_"]
            .iter()
            .find_map(|prefix| name.strip_prefix(prefix))
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists()
            && std::fs::remove_file(entry.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_has_sign_seconds_and_rate() {
        assert_eq!(ClockSetting::REAL.spec(), "+0.000");
        let jump = ClockSetting {
            offset_ms: 60_000,
            rate_milli: None,
        };
        assert_eq!(jump.spec(), "+60.000");
        let back = ClockSetting {
            offset_ms: -1_250,
            rate_milli: Some(10_000),
        };
        assert_eq!(back.spec(), "-1.250 x10.000");
        let slow = ClockSetting {
            offset_ms: 0,
            rate_milli: Some(500),
        };
        assert_eq!(slow.spec(), "+0.000 x0.500");
    }

    #[test]
    fn stale_shm_files_of_dead_pids_are_removed_and_live_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let live = std::process::id();
        // Beyond the kernel's pid_max: never a live process.
        let dead = 4_194_305 + 7;
        let names = [
            format!("faketime_shm_{dead}"),
            format!("sem.faketime_sem_{dead}"),
            format!("faketime_shm_{live}"),
            "faketime_shm_notapid".to_owned(),
            "other".to_owned(),
        ];
        for n in &names {
            std::fs::write(dir.path().join(n), b"").unwrap();
        }
        assert_eq!(clean_stale_shm_in(dir.path()), 2);
        for (n, kept) in names.iter().zip([false, false, true, true, true]) {
            assert_eq!(dir.path().join(n).exists(), kept, "{n}");
        }
    }
}
