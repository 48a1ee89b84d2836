//! `lockpick report`: render a stored run's report.html again, or a suite record's page and
//! markdown.

use super::incomplete::incomplete_run;
use crate::outcome::{Exit, Failure, Outcome};
use lockpick_reports::SUITE_FILE;
use std::path::Path;

pub(super) fn report(dir: &Path, markdown: Option<&Path>) -> Outcome {
    if dir.join(SUITE_FILE).is_file() {
        return suite(dir, markdown);
    }
    if markdown.is_some() {
        return Err(Failure::Usage(format!(
            "read --markdown: {} holds no {SUITE_FILE}; allowed: a suite record's folder (STORE/suite/<time>)",
            dir.display()
        )));
    }
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

/// A suite record's folder (`STORE/suite/<time>/`): its trend page again, and the markdown.
fn suite(dir: &Path, markdown: Option<&Path>) -> Outcome {
    let store = dir
        .parent()
        .and_then(Path::parent)
        .unwrap_or_else(|| Path::new("."));
    let page = lockpick_reports::write_suite_page(store, dir).map_err(Failure::WriteOutput)?;
    outln!("{}", page.display());
    if let Some(path) = markdown {
        let text = lockpick_reports::suite_markdown(dir).map_err(Failure::RunFolder)?;
        lockpick_reports::write_atomic(path, text.as_bytes()).map_err(Failure::WriteOutput)?;
        outln!("{}", path.display());
    }
    Ok(Exit::Done)
}
