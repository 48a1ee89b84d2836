//! `lockpick export`: a lockpick history as Jepsen EDN op maps, for Knossos or Elle; from a run
//! folder, with each fault instance's exposure on the nemesis op that started it.

use crate::outcome::{Exit, Outcome};
use lockpick_checker::history::read_history;
use lockpick_checker::import::to_jepsen_edn_exposed;
use std::path::Path;

pub(super) fn export(history: &Path) -> Outcome {
    let path = if history.is_dir() {
        history.join("history.jsonl")
    } else {
        history.to_owned()
    };
    let events = read_history(&path)?;
    // A run folder's results say how its faults were judged; a bare history file has none.
    let exposures = (history.is_dir())
        .then(|| lockpick_reports::read_results(history).ok())
        .flatten()
        .and_then(|r| r.exposures);
    out!("{}", to_jepsen_edn_exposed(&events, exposures.as_ref()));
    Ok(Exit::Done)
}
