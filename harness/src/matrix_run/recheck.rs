//! A recorded matrix's runs checked again from their histories (`matrix --recheck`): after a
//! fix to the checker, the runs need not be made again to be judged by it. Each run's own
//! scenario copy says what was promised and what its faults are judged by, its server record
//! is set beside the holders' beliefs, and its `results.json`, report and matrix record are
//! rewritten with the new checks, the record naming who checked it again, when, and the
//! verdict it had before. Nothing is run.

use super::book::Book;
use super::{MatrixEvent, Say};
use crate::run::utc_stamp;
use crate::scenario::parse_scenario;
use lockpick_checker::history::read_history;
use lockpick_checker::lock::LockCheckParams;
use lockpick_checker::run_checks::check_run_file_with_server;
use lockpick_checker::server_record::read_server_record_in;
use lockpick_reports::matrix::{summarize_run, Recheck, RunPlace, RunSummary};
use std::path::Path;
use std::time::SystemTime;

/// What a recheck did, for the command to print.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Rechecked {
    /// Runs checked again.
    pub runs: usize,
    /// (row, column, seed, verdict before, verdict now) of each run whose verdict changed.
    pub changed: Vec<(String, String, u64, String, String)>,
    /// (row, column, seed, why) of each run kept as recorded: a run the harness could not
    /// make (it has no history), or one whose folder or files could not be read.
    pub kept: Vec<(String, String, u64, String)>,
}

/// Checks every run of `book` again from its history in `store`, by `by`, and records the new
/// summaries in the book's folder (the caller writes the record and page).
pub(super) fn recheck_runs(
    book: &mut Book,
    store: &Path,
    by: &str,
    say: &mut Say,
) -> Result<Rechecked, super::MatrixRunError> {
    let at = utc_stamp(SystemTime::now());
    let mut out = Rechecked::default();
    let keys: Vec<_> = book.done.keys().cloned().collect();
    for key in keys {
        let old = book.done[&key].clone();
        let again = match (&old.verdict, &old.run) {
            (Some(_), Some(run)) => recheck_run(&store.join(run), &old, by, &at),
            _ => Err("the harness could not make it: there is no history".to_owned()),
        };
        match again {
            Ok(new) => {
                out.runs += 1;
                if new.verdict != old.verdict {
                    let name = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".into());
                    out.changed.push((
                        key.0.clone(),
                        key.1.clone(),
                        key.2,
                        name(&old.verdict),
                        name(&new.verdict),
                    ));
                }
                book.put_run(key, new)?;
            }
            Err(why) => {
                say(MatrixEvent::Note(format!(
                    "{} × {} seed {}: kept as recorded: {why}",
                    key.0, key.1, key.2
                )));
                out.kept.push((key.0, key.1, key.2, why));
            }
        }
    }
    Ok(out)
}

/// One run checked again from its folder `dir`: its results and report rewritten, and its
/// new summary.
fn recheck_run(dir: &Path, old: &RunSummary, by: &str, at: &str) -> Result<RunSummary, String> {
    let scenario_path = dir.join("scenario.toml");
    let text = std::fs::read_to_string(&scenario_path)
        .map_err(|e| format!("read {}: {e}", scenario_path.display()))?;
    let scenario = parse_scenario(&scenario_path, &text).map_err(|e| e.to_string())?;
    let params = LockCheckParams {
        property: scenario.property,
        deadlock_ms: scenario.deadlock_ms,
    };
    let plan = scenario.exposure_plan();
    let server = read_server_record_in(dir).map_err(|e| e.to_string())?;
    let recorded = lockpick_reports::read_results(dir).map_err(|e| e.to_string())?;
    let history = dir.join(&recorded.history);
    let found = check_run_file_with_server(
        &history,
        &params,
        Some(plan.clone()),
        server.map(|s| s.events),
    )
    .map_err(|e| format!("read {}: {e}", history.display()))?;
    let results = found.checks.into_results(recorded);
    let json = serde_json::to_vec_pretty(&results).expect("results serialize");
    lockpick_reports::write_atomic(&dir.join("results.json"), &json).map_err(|e| e.to_string())?;
    lockpick_reports::write_run_report_streaming(dir, &results).map_err(|e| e.to_string())?;
    let events = read_history(&history).map_err(|e| format!("read {}: {e}", history.display()))?;
    let place = RunPlace {
        row: old.row.clone(),
        column: old.column.clone(),
        seed: old.seed,
        run: old.run.clone(),
        reproduce: old.reproduce.clone(),
        secs: old.secs,
    };
    let mut new = summarize_run(place, &results, &events, plan);
    new.library = old.library.clone();
    new.runtime_stall_ms = old.runtime_stall_ms;
    // The verdict the run was made with, through any number of rechecks.
    let was = (old.recheck.as_ref()).map_or_else(|| old.verdict.clone(), |r| r.was.clone());
    new.recheck = Some(Recheck {
        by: by.to_owned(),
        at: at.to_owned(),
        was,
    });
    Ok(new)
}
