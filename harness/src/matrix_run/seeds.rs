//! The matrix's runs, seed by seed across the whole matrix (so that a matrix cut short has
//! about as many runs in every cell), each recorded as it ends.

use super::book::Book;
use super::cells::{reuse_order, Cell, Ownership};
use super::{MatrixCommands, MatrixEvent, MatrixRequest, MatrixRunError, RunKey, Say};
use crate::client::process::read_hello;
use crate::run::{relative_run, run_scenario_in, RunOptions, ServerPool};
use lockpick_checker::history::read_history;
use lockpick_reports::matrix::{failed_run, summarize_run, RunPlace, RunSummary};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// Makes every run of `cells` not made yet (all of them with `redo`), of this shard only;
/// `Ok(true)` when interrupted (a run cut short is not recorded, so resuming makes it again).
pub(super) async fn run_seeds(
    req: &MatrixRequest,
    commands: &dyn MatrixCommands,
    cells: &[Cell<'_>],
    book: &mut Book,
    interrupt: CancellationToken,
    say: &mut Say,
) -> Result<bool, MatrixRunError> {
    let mut pool = if req.fresh_servers {
        ServerPool::fresh()
    } else {
        ServerPool::reusing()
    };
    let made = make_runs(req, commands, cells, book, &mut pool, interrupt, say).await;
    // Also when a record could not be written: the servers must not outlive the matrix.
    pool.close().await;
    made
}

/// The loop of [`run_seeds`], on `pool`'s servers.
async fn make_runs(
    req: &MatrixRequest,
    commands: &dyn MatrixCommands,
    cells: &[Cell<'_>],
    book: &mut Book,
    pool: &mut ServerPool,
    interrupt: CancellationToken,
    say: &mut Say,
) -> Result<bool, MatrixRunError> {
    let mine = Ownership::of(book, cells);
    let order = reuse_order(cells);
    let (first_seed, seeds) = (book.matrix.first_seed, book.matrix.seeds);
    for k in 0..book.seed_window() {
        let seed = first_seed.wrapping_add(k);
        // Past the first seeds (with `until`), only the cells whose answer is not sure yet.
        let open: Vec<&Cell<'_>> = (order.iter().map(|&i| &cells[i]))
            .filter(|c| k < seeds || book.unsure(&c.plan.row, &c.plan.column))
            .collect();
        if open.is_empty() {
            break;
        }
        for cell in open {
            let key: RunKey = (cell.plan.row.clone(), cell.plan.column.clone(), seed);
            if !mine.owns(&key) {
                continue;
            }
            let finished = book.done.get(&key).is_some_and(|r| r.error.is_none());
            if finished && !req.redo {
                continue;
            }
            if interrupt.is_cancelled() {
                return Ok(true);
            }
            let run = OneRun {
                req,
                cell,
                seed,
                reproduce: commands.reproduce(&cell.file, seed),
            };
            let Some(summary) = run.make(pool, interrupt.clone(), say).await else {
                return Ok(true);
            };
            say(MatrixEvent::Run(&summary));
            book.add_run(key, summary)?;
        }
    }
    Ok(false)
}

/// One run of a cell.
struct OneRun<'a> {
    req: &'a MatrixRequest,
    cell: &'a Cell<'a>,
    seed: u64,
    reproduce: String,
}

impl OneRun<'_> {
    /// Makes the run on `pool`'s servers and sums it up; a run that could not be made is a
    /// failed run, said so. `None`: interrupted.
    async fn make(
        self,
        pool: &mut ServerPool,
        interrupt: CancellationToken,
        say: &mut Say,
    ) -> Option<RunSummary> {
        let req = self.req;
        let opts = RunOptions {
            seed: Some(self.seed),
            store: req.store.clone(),
            reproduce: self.reproduce.clone(),
            toxiproxy: req.toxiproxy,
            external: req.external.clone(),
            resource: req.resource,
            ..RunOptions::default()
        };
        let mut at = RunPlace {
            row: self.cell.plan.row.clone(),
            column: self.cell.plan.column.clone(),
            seed: self.seed,
            run: None,
            reproduce: self.reproduce,
            secs: 0.0,
        };
        let started = Instant::now();
        let outcome = run_scenario_in(&self.cell.scenario, &opts, interrupt, pool).await;
        at.secs = started.elapsed().as_secs_f64();
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(e) => return Some(failed_run(at, e.to_string())),
        };
        let report = lockpick_reports::write_run_report_streaming(&outcome.dir, &outcome.results);
        say(MatrixEvent::Report(report.map_err(|e| e.to_string())));
        if outcome.results.interrupted {
            return None;
        }
        at.run = relative_run(&req.store, &outcome.dir);
        let plan = self.cell.scenario.exposure_plan();
        let mut summary = match read_history(&outcome.dir.join(&outcome.results.history)) {
            Ok(events) => summarize_run(at, &outcome.results, &events, plan),
            Err(e) => failed_run(at, format!("read the history: {e}")),
        };
        summary.library = read_hello(&outcome.dir).map(|h| format!("{} {}", h.library, h.version));
        Some(summary)
    }
}
