//! Run folders whose run did not end with a check (killed during some phase, or still
//! running): what `check` and `report` say about them instead of a read error.

use crate::exit_code;
use lockpick_checker::lock::LockCheckParams;
use lockpick_checker::run_checks::check_run_file;
use lockpick_checker::verdict::Verdict;
use lockpick_reports::store::{RunState, RunStatus};
use std::path::Path;

/// A run folder's record that says the run did not finish.
pub(crate) struct Incomplete {
    pub state: RunState,
    /// e.g. "interrupted during workload: lockpick pid 12 is gone without finishing it".
    pub sentence: String,
}

/// The run folder `dir`'s record if it tells of a run that did not end with a check; `None`
/// for a finished run or a folder without `run.json`; the exit code after printing why when
/// the record cannot be read.
pub(crate) fn incomplete_run(dir: &Path) -> Result<Option<Incomplete>, u8> {
    match RunState::read(dir) {
        Ok(state) => Ok(state.and_then(|state| {
            let sentence = state.incomplete_sentence()?;
            Some(Incomplete { state, sentence })
        })),
        Err(e) => {
            eprintln!("lockpick: failed to {e}");
            Err(exit_code::USAGE)
        }
    }
}

/// `check` on an incomplete run: says what happened, checks what was recorded (with `params`,
/// from the run's scenario or the options) if the workload ran, and exits with [`exit_code::INCOMPLETE_RUN`] (or [`exit_code::INVALID`] when
/// what was recorded already proves a violation).
pub(crate) fn check_incomplete(dir: &Path, run: &Incomplete, params: &LockCheckParams) -> u8 {
    println!("{}: {}", dir.display(), run.sentence);
    if matches!(run.state.status(), RunStatus::Running(_)) {
        println!("  check it once it has ended");
        return exit_code::INCOMPLETE_RUN;
    }
    if !run.state.phase.workload_ran() {
        println!("  no client operation ran: there is nothing to check");
        return exit_code::INCOMPLETE_RUN;
    }
    let history = dir.join("history.jsonl");
    let found = match check_run_file(&history, params) {
        Ok(f) => f,
        Err(e) => {
            println!("  what was recorded cannot be checked: {e}");
            return exit_code::INCOMPLETE_RUN;
        }
    };
    println!(
        "  what was recorded before it stopped ({} events):",
        found.events
    );
    // A kill can cut the last line short; everything before it is checked.
    if let Some(torn) = &found.torn {
        println!("  note: {}: {torn}", history.display());
    }
    let checks = found.checks;
    print!("{}", checks.lock);
    if checks.verdict() == Verdict::Invalid {
        exit_code::INVALID
    } else {
        exit_code::INCOMPLETE_RUN
    }
}
