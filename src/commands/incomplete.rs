//! Run folders whose run did not end with a check (killed during some phase, or still
//! running): what `check` and `report` say about them instead of a read error.

use crate::outcome::{Exit, Failure};
use lockpick_checker::lock::LockCheckParams;
use lockpick_checker::run_checks::{check_run_file, FileChecks};
use lockpick_checker::verdict::Verdict;
use lockpick_store::{RunState, RunStatus};
use std::path::Path;

/// A run folder's record that says the run did not finish.
pub(crate) struct Incomplete {
    pub state: RunState,
    /// e.g. "interrupted during workload: lockpick pid 12 is gone without finishing it".
    pub sentence: String,
}

/// The run folder `dir`'s record if it tells of a run that did not end with a check; `None`
/// for a finished run or a folder without `run.json`.
pub(crate) fn incomplete_run(dir: &Path) -> Result<Option<Incomplete>, Failure> {
    let state = RunState::read(dir).map_err(Failure::RunRecord)?;
    Ok(state.and_then(|state| {
        let sentence = state.incomplete_sentence()?;
        Some(Incomplete { state, sentence })
    }))
}

/// `check` on an incomplete run: says what happened, checks what was recorded (with `params`,
/// from the run's scenario or the options) if the workload ran, and ends with
/// [`Exit::IncompleteRun`] (or an invalid verdict when what was recorded already proves a
/// violation); with what it checked, for the report, if it checked anything.
pub(crate) fn check_incomplete(
    dir: &Path,
    run: &Incomplete,
    params: &LockCheckParams,
) -> (Exit, Option<FileChecks>) {
    outln!("{}: {}", dir.display(), run.sentence);
    if matches!(run.state.status(), RunStatus::Running(_)) {
        outln!("  check it once it has ended");
        return (Exit::IncompleteRun, None);
    }
    if !run.state.phase.workload_ran() {
        outln!("  no client operation ran: there is nothing to check");
        return (Exit::IncompleteRun, None);
    }
    let history = dir.join("history.jsonl");
    let found = match check_run_file(&history, params) {
        Ok(f) => f,
        Err(e) => {
            outln!("  what was recorded cannot be checked: {e}");
            return (Exit::IncompleteRun, None);
        }
    };
    outln!(
        "  what was recorded before it stopped ({} events):",
        found.events
    );
    // A kill can cut the last line short; everything before it is checked.
    if let Some(torn) = &found.torn {
        outln!("  note: {}: {torn}", history.display());
    }
    out!("{}", found.checks.lock);
    let exit = if found.checks.verdict() == Verdict::Invalid {
        Exit::Verdict(Verdict::Invalid)
    } else {
        Exit::IncompleteRun
    };
    (exit, Some(found))
}
