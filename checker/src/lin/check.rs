//! Entry points: check a history, lockpick events or a file against a named model.

use super::budget::Budget;
use super::op::History;
use super::report::LinReport;
use super::run::check_parts;
use crate::history::Event;
use crate::import::{self, Format, ImportError};
use crate::models::{kv, lease, mutex, register, ModelError, ModelName};
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
/// the search.
pub fn check_history(
    history: &History,
    model: ModelName,
    budget: &Budget,
) -> Result<LinReport, ModelError> {
    let start = Instant::now();
    let name = model.name();
    let mut report = match model {
        ModelName::Register => check_parts(name, history, register::parts(history, false)?, budget),
        ModelName::CasRegister => {
            check_parts(name, history, register::parts(history, true)?, budget)
        }
        ModelName::Kv => check_parts(name, history, kv::parts(history)?, budget),
        ModelName::Mutex => check_parts(name, history, mutex::parts(history, false)?, budget),
        ModelName::FencedMutex => check_parts(name, history, mutex::parts(history, true)?, budget),
        ModelName::Lease => check_parts(name, history, lease::parts(history)?, budget),
    };
    report.elapsed = start.elapsed() - report.explain_elapsed;
    Ok(report)
}

/// Checks a lockpick history (as read by [`crate::history::read_history`]). Nemesis events
/// and operations that are not lock, register or kv operations are ignored.
pub fn check_events(
    events: &[Event],
    model: ModelName,
    budget: &Budget,
) -> Result<LinReport, ModelError> {
    check_history(&import::from_events(events), model, budget)
}

/// Reads a history file in `format` (detected from its content when `None`) and checks it.
pub fn check_file(
    path: &Path,
    model: ModelName,
    format: Option<Format>,
    budget: &Budget,
) -> Result<LinReport, CheckError> {
    let history = import::read_file(path, format)?;
    Ok(check_history(&history, model, budget)?)
}
