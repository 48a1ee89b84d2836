//! `lockpick report`: render a stored run's report.html again.

use super::incomplete::incomplete_run;
use crate::outcome::{Exit, Failure, Outcome};
use std::path::Path;

pub(super) fn report(dir: &Path) -> Outcome {
    if let Some(run) = incomplete_run(dir)? {
        outln!("{}: {}", dir.display(), run.sentence);
        outln!(
            "  no results to report; `lockpick check {}` checks what was recorded and writes its report.html",
            dir.display()
        );
        return Ok(Exit::IncompleteRun);
    }
    let path = lockpick_reports::report_run_dir(dir).map_err(Failure::RunFolder)?;
    outln!("{}", path.display());
    Ok(Exit::Done)
}
