//! Whether a matrix file's expectations changed after its runs began, and in which commit: a
//! page made again with the file as it is now says so, since its cells are then judged by
//! expectations written after seeing results.

use super::provenance::{expectation_source, git_dir};
use crate::matrix::{load_matrix, parse_matrix};
use lockpick_reports::matrix::ExpectationSource;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Every cell's expectation (verdict and reason) by row and column.
type Expectations = BTreeMap<(String, String), String>;

/// When the expectations of `file` as it is now are not those of the commit the runs began at
/// (`recorded`): the commit that last changed them (and whether changes not committed change
/// them again), for the page to say the cells are judged by expectations written later. Notes
/// and the rest of the file are meant to change after the runs (a note says what the runs
/// showed), so a change to them alone is none here. When a version of the file cannot be read
/// or parsed, any change to the file counts.
pub(super) fn changed_after(
    recorded: &ExpectationSource,
    file: &Path,
) -> Option<Box<ExpectationSource>> {
    let now = expectation_source(file);
    if now.commit == recorded.commit && !now.uncommitted {
        return None;
    }
    let (Some(began), false) = (&recorded.commit, recorded.uncommitted) else {
        // What the file held when the runs began is in no commit: nothing to compare.
        return Some(Box::new(now));
    };
    let changed = || Some(Box::new(now.clone()));
    let (Some(then), Some(working)) = (at_commit(file, began), load_matrix(file).ok()) else {
        return changed();
    };
    let working = of(&working);
    if then == working {
        return None;
    }
    // The newest commit since the runs began that changed an expectation; the file's last
    // commit when only changes not committed did.
    let mut last = None;
    let mut before = then;
    for (commit, date) in commits_since(file, began).into_iter().rev() {
        let Some(version) = at_commit(file, &commit) else {
            return changed();
        };
        if version != before {
            last = Some((commit, date));
        }
        before = version;
    }
    let uncommitted = now.uncommitted && before != working;
    let (commit, committed) = match last {
        Some((c, d)) => (Some(c), Some(d)),
        None => (now.commit.clone(), now.committed.clone()),
    };
    Some(Box::new(ExpectationSource {
        commit,
        committed,
        uncommitted,
        ..now
    }))
}

/// The expectations of `file` as committed in `commit`.
fn at_commit(file: &Path, commit: &str) -> Option<Expectations> {
    let out = git(file, &["show", &format!("{commit}:./{}", name(file)?)])?;
    parse_matrix(file, &out).ok().map(|m| of(&m))
}

/// The commits after `began` that changed `file`, oldest last as git lists them, each with
/// its date.
fn commits_since(file: &Path, began: &str) -> Vec<(String, String)> {
    let Some(name) = name(file) else {
        return Vec::new();
    };
    let range = format!("{began}..HEAD");
    let log = git(file, &["log", "--format=%H %cI", &range, "--", &name]).unwrap_or_default();
    (log.lines())
        .filter_map(|l| l.split_once(' '))
        .map(|(c, d)| (c.to_owned(), d.to_owned()))
        .collect()
}

fn name(file: &Path) -> Option<String> {
    file.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// `git ARGS` in the folder of `file`: its output, or `None` when it failed.
fn git(file: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(git_dir(file)?)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn of(m: &crate::matrix::Matrix) -> Expectations {
    (m.rows.iter())
        .flat_map(|r| (r.expect.iter()).map(|(c, e)| ((r.name.clone(), c.clone()), e.to_string())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix_run::test_matrix::one_pause_cell;

    fn matrix_text(expect: &str, note: &str) -> String {
        one_pause_cell(expect, (!note.is_empty()).then_some(note))
    }

    fn git(dir: &Path, args: &[&str]) {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@localhost"])
            .args(args)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    #[test]
    fn a_note_added_after_the_runs_changes_no_expectation_and_a_verdict_changed_does() {
        if Command::new("git").arg("--version").output().is_err() {
            eprintln!("NOT CHECKED: no git here");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("m.toml");
        std::fs::write(&file, matrix_text("valid: a pause ends", "")).unwrap();
        git(dir.path(), &["init", "-q"]);
        git(dir.path(), &["add", "m.toml"]);
        git(dir.path(), &["commit", "-q", "-m", "expectations"]);
        let began = expectation_source(&file);
        assert!(began.commit.is_some() && !began.uncommitted, "{began:?}");

        // A note written after the runs, committed or not, is no new expectation.
        std::fs::write(
            &file,
            matrix_text("valid: a pause ends", "a pause broke it"),
        )
        .unwrap();
        assert_eq!(changed_after(&began, &file), None);
        git(dir.path(), &["commit", "-q", "-am", "note"]);
        assert_eq!(changed_after(&began, &file), None);

        // Nor is the page's first sentence about them.
        std::fs::write(
            &file,
            matrix_text("invalid: a pause ends", "a pause broke it"),
        )
        .unwrap();
        let now = changed_after(&began, &file).expect("a verdict changed after the runs");
        assert!(now.uncommitted, "{now:?}");
        git(dir.path(), &["commit", "-q", "-am", "expect invalid"]);
        let now = changed_after(&began, &file).expect("a verdict changed after the runs");
        assert!(!now.uncommitted && now.commit != began.commit, "{now:?}");
        // A note committed later leaves the page naming the commit that changed the verdict.
        std::fs::write(
            &file,
            matrix_text("invalid: a pause ends", "pauses break it"),
        )
        .unwrap();
        git(dir.path(), &["commit", "-q", "-am", "another note"]);
        let later = changed_after(&began, &file).unwrap();
        assert_eq!(
            (later.commit, later.uncommitted),
            (now.commit.clone(), false)
        );

        // A reason reworded is a changed expectation too: the page shows the reason.
        let mut reworded = began.clone();
        reworded.commit = now.commit.clone();
        std::fs::write(
            &file,
            matrix_text("invalid: a long pause", "a pause broke it"),
        )
        .unwrap();
        assert!(changed_after(&reworded, &file).is_some());
    }
}
