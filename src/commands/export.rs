//! `lockpick export`: a lockpick history as Jepsen EDN op maps, for Knossos or Elle.

use crate::outcome::{Exit, Outcome};
use lockpick_checker::history::read_history;
use lockpick_checker::import::to_jepsen_edn;
use std::path::Path;

pub(super) fn export(history: &Path) -> Outcome {
    let path = if history.is_dir() {
        history.join("history.jsonl")
    } else {
        history.to_owned()
    };
    let events = read_history(&path)?;
    out!("{}", to_jepsen_edn(&events));
    Ok(Exit::Done)
}
