//! Linearizability's entry points: a history, lockpick events or a file in any importable
//! format, checked against a model of the registry. Above the search (`lin_search`), the models and
//! the importers, which all stay below it.

use crate::history::Event;
use crate::import::{self, Format, ImportError};
use crate::lin_search::{Budget, History, LinReport};
use crate::models::{coverage, Model, ModelError};
use crate::verdict::Verdict;
use std::path::Path;
use std::time::Instant;

/// Why a file could not be checked.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Import(#[from] ImportError),
    #[error(transparent)]
    Model(#[from] ModelError),
}

/// Checks a history against a model. The report's `elapsed` covers preparing the model and
/// the search. An operation outside the model's vocabulary, or a history of which the model
/// takes no operation, is an error ([`coverage`]); a history without operations is `unknown`:
/// nothing was tested.
pub fn check_history(
    history: &History,
    model: &dyn Model,
    budget: &Budget,
) -> Result<LinReport, ModelError> {
    let start = Instant::now();
    let covered = coverage(model, history)?;
    let mut report = model.check(history, budget)?;
    report.elapsed = start.elapsed() - report.explain_elapsed;
    report.passed_over = covered.passed_over;
    if history.ops.is_empty() {
        report.verdict = Verdict::Unknown;
        report.unknown_reason =
            Some("the history holds no client operation: nothing was tested".to_string());
    }
    Ok(report)
}

/// Checks a lockpick history (as read by [`crate::history::read_history`]). Nemesis events
/// and operations that are not lock, register or kv operations are ignored.
pub fn check_events(
    events: &[Event],
    model: &dyn Model,
    budget: &Budget,
) -> Result<LinReport, CheckError> {
    Ok(check_history(&import::from_events(events)?, model, budget)?)
}

/// Reads a history file in `format` (detected from its content when `None`) and checks it.
pub fn check_file(
    path: &Path,
    model: &dyn Model,
    format: Option<Format>,
    budget: &Budget,
) -> Result<LinReport, CheckError> {
    let imported = import::read_file_lines(path, format)?;
    check_history(&imported.history, model, budget).map_err(|mut e| {
        e.line = imported.lines.get(e.index).copied();
        CheckError::Model(e)
    })
}
