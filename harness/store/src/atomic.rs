//! Whole-or-nothing writes into the store: a file a reader trusts (results, report, run
//! state) or the `latest` link is first written under a temporary name in the same folder,
//! synced, then renamed over the final name. A reader, or a lockpick killed mid-write, sees
//! the old file or the new one, never half of one. Renaming replaces a symlink at the final
//! name itself, so a write never follows a link out of the store.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A temporary name beside `path`, unique in this process, starting with `.` so that
/// listings skip it: `.<name>.tmp-<pid>-<n>`.
fn temp_beside(path: &Path) -> io::Result<PathBuf> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} names no file", path.display()),
        )
    })?;
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    Ok(path.with_file_name(format!(
        ".{}.tmp-{}-{n}",
        name.to_string_lossy(),
        std::process::id()
    )))
}

/// Writes `bytes` to `path` whole or not at all (temporary file, fsync, rename, fsync of the
/// folder). An existing file or symlink at `path` is replaced, never written through.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = temp_beside(path)?;
    let written = (|| {
        // create_new: never opens (and so never follows) anything already at the temp name.
        let mut file = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written?;
    sync_parent(path);
    Ok(())
}

/// Points the symlink `link` at `target` atomically (a temporary link renamed over it), so
/// there is no moment without a `latest`, and whatever was at `link` is replaced, not
/// followed.
#[cfg(unix)]
pub fn link_atomic(target: &Path, link: &Path) -> io::Result<()> {
    let tmp = temp_beside(link)?;
    std::os::unix::fs::symlink(target, &tmp)?;
    if let Err(e) = std::fs::rename(&tmp, link) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    sync_parent(link);
    Ok(())
}

/// Without symlinks there is no `latest`; the runs are still listed by name.
#[cfg(not(unix))]
pub fn link_atomic(_target: &Path, _link: &Path) -> io::Result<()> {
    Ok(())
}

/// Makes the rename itself durable. Best effort: some file systems refuse to sync a folder.
fn sync_parent(path: &Path) {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        if let Ok(dir) = File::open(parent) {
            let _ = dir.sync_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_whole_files_and_replaces_old_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.json");
        write_atomic(&path, b"{\"a\":1}").unwrap();
        write_atomic(&path, b"{}").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{}");
        // No temporary file is left beside it.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("results.json")]);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_at_the_name_is_replaced_not_written_through() {
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim");
        std::fs::write(&victim, b"keep me").unwrap();
        let run = tempfile::tempdir().unwrap();
        let report = run.path().join("report.html");
        std::os::unix::fs::symlink(&victim, &report).unwrap();
        write_atomic(&report, b"<html>").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
        assert!(!std::fs::symlink_metadata(&report)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&report).unwrap(), b"<html>");
    }

    #[cfg(unix)]
    #[test]
    fn links_are_swapped_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("latest");
        std::fs::create_dir(dir.path().join("a")).unwrap();
        std::fs::create_dir(dir.path().join("b")).unwrap();
        link_atomic(Path::new("a"), &link).unwrap();
        link_atomic(Path::new("b"), &link).unwrap();
        assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("b"));
        // A plain file at the name is replaced too.
        std::fs::remove_file(&link).unwrap();
        std::fs::write(&link, b"x").unwrap();
        link_atomic(Path::new("a"), &link).unwrap();
        assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("a"));
    }
}
