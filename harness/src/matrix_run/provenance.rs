//! Where a matrix's expectations came from when its runs began: the matrix file as git has it
//! (its last commit, and whether it had changes not committed), for the page to say whether the
//! expectations were written before the results.

use lockpick_reports::matrix::ExpectationSource;
use std::path::Path;
use std::process::Command;

/// The folder git runs in for `file`.
pub(super) fn git_dir(file: &Path) -> Option<std::path::PathBuf> {
    match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => Some(d.to_owned()),
        Some(_) => Some(Path::new(".").to_owned()),
        None => None,
    }
}

/// The matrix file `file` as git has it now. Git missing, or a file outside a checkout, is
/// said as such, never taken for "committed".
pub(super) fn expectation_source(file: &Path) -> ExpectationSource {
    let shown = file.display().to_string();
    let unknown = |why: String| ExpectationSource {
        file: shown.clone(),
        commit: None,
        committed: None,
        uncommitted: false,
        unknown: Some(why),
        changed_after: None,
    };
    let dir = git_dir(file).unwrap_or_else(|| Path::new(".").to_owned());
    let Some(name) = file.file_name() else {
        return unknown("it names no file".to_owned());
    };
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(&dir)
            .args(args)
            .arg("--")
            .arg(name)
            .output()
    };
    let log = match git(&["log", "-1", "--format=%H %cI"]) {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).trim().to_owned(),
        Ok(out) => {
            return unknown(
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .next()
                    .unwrap_or("git log failed")
                    .to_owned(),
            )
        }
        Err(e) => return unknown(format!("git did not run: {e}")),
    };
    let status = match git(&["status", "--porcelain"]) {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).trim().to_owned(),
        Ok(_) | Err(_) => return unknown("git status failed".to_owned()),
    };
    let (commit, committed) = match log.split_once(' ') {
        Some((c, d)) => (Some(c.to_owned()), Some(d.to_owned())),
        None => (None, None),
    };
    ExpectationSource {
        file: shown,
        // An untracked file has no commit, and `status` lists it with `??`.
        uncommitted: !status.is_empty() || commit.is_none(),
        commit,
        committed,
        unknown: None,
        changed_after: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_outside_any_checkout_is_unknown_never_committed() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("m.toml");
        std::fs::write(&file, "name = \"m\"\n").unwrap();
        let source = expectation_source(&file);
        assert!(source.commit.is_none(), "{source:?}");
        assert!(source.unknown.is_some(), "{source:?}");
        assert!(
            source
                .sentence()
                .contains("nothing shows they were written before the runs"),
            "{source:?}"
        );
    }

    #[test]
    fn the_shipped_default_matrix_has_a_commit() {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/matrix/default.toml");
        let source = expectation_source(&file);
        // In a checkout with git the file is tracked; a source tarball without .git says why.
        match &source.unknown {
            Some(why) => eprintln!("NOT CHECKED: git cannot tell here: {why}"),
            None => assert!(source.commit.is_some(), "{source:?}"),
        }
    }
}
