//! The store layout: `store/<scenario>/<run-id>/` per run, with a `latest` link beside.

use super::error::RunError;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// UTC time as `YYYYMMDDTHHMMSSZ`.
pub fn utc_stamp(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// Creates a fresh run folder under `root/<scenario>/` and points `latest` at it.
pub fn create_run_dir(root: &Path, scenario: &str, seed: u64) -> Result<PathBuf, RunError> {
    let parent = root.join(scenario);
    let stamp = utc_stamp(SystemTime::now());
    let mut n = 0;
    let dir = loop {
        let id = match n {
            0 => format!("{stamp}-seed{seed}"),
            _ => format!("{stamp}-seed{seed}-{n}"),
        };
        let dir = parent.join(id);
        std::fs::create_dir_all(&parent).map_err(|e| RunError::store(&parent, e))?;
        match std::fs::create_dir(&dir) {
            Ok(()) => break dir,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
            Err(e) => return Err(RunError::store(&dir, e)),
        }
    };
    let latest = parent.join("latest");
    let _ = std::fs::remove_file(&latest);
    // Best effort: a store on a file system without symlinks still works, just without it.
    #[cfg(unix)]
    let _ = std::os::unix::fs::symlink(dir.file_name().unwrap_or_default(), &latest);
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn utc_stamp_formats_known_instants() {
        assert_eq!(utc_stamp(UNIX_EPOCH), "19700101T000000Z");
        assert_eq!(
            utc_stamp(UNIX_EPOCH + Duration::from_secs(1_795_303_614)),
            "20261121T232654Z"
        );
        assert_eq!(
            utc_stamp(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "20000229T000000Z"
        );
    }
}
