//! `explore_safe`: after the fixed-size runs, a search (`lockpick explore`) of each cell that
//! came out safe, limited to the column's faults and the row's own workload, so that a cell
//! stays safe only if a search over the fault's sizes and timings did not break it either.
//! Each search is an ordinary exploration under `STORE/explore/`; its summary goes to
//! `explore/<row>--<column>.json` in the matrix folder, which resuming skips.

use super::book::{Book, CELL_EXPLORE_VERSION};
use super::cells::Cell;
use super::{MatrixCommands, MatrixEvent, MatrixRequest, MatrixRunError, Say};
use crate::explore::{explore, Base, Config, Exploration, ExploreError, Need, ScheduleExt};
use crate::scenario::Scenario;
use lockpick_reports::matrix::{CellExplore, CellStatus};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The searches of one matrix.
pub(super) struct Search<'a> {
    pub req: &'a MatrixRequest,
    pub commands: &'a dyn MatrixCommands,
    /// How long each cell is searched (and a find shrunk).
    pub budget: Duration,
}

impl Search<'_> {
    /// Searches each of `cells` that the runs found safe or could not test (or that an
    /// earlier search broke) and that is not searched yet (all of them with `redo`);
    /// `Ok(true)` when interrupted.
    pub async fn cells(
        &self,
        cells: &[Cell<'_>],
        book: &mut Book,
        interrupt: CancellationToken,
        say: &mut Say,
    ) -> Result<bool, MatrixRunError> {
        let matrix_file =
            (self.req.file.clone()).unwrap_or_else(|| book.place.dir.join("matrix.toml"));
        let record = book.record();
        for c in cells {
            let (row, column) = (&c.plan.row, &c.plan.column);
            let key = (row.clone(), column.clone());
            if book.explored.contains_key(&key) && !self.req.redo {
                continue;
            }
            let safe = record.cell(row, column).is_some_and(|c| {
                matches!(
                    c.status,
                    CellStatus::Safe { .. }
                        | CellStatus::NotExposed(_)
                        | CellStatus::UnsafeExplored { .. }
                )
            });
            if !safe {
                continue;
            }
            let faults = column_faults(&c.scenario);
            if faults.is_empty() {
                say(MatrixEvent::Note(format!(
                    "not exploring {row} × {column}: the column has no fault to draw"
                )));
                continue;
            }
            if interrupt.is_cancelled() {
                return Ok(true);
            }
            let cell = CellSearch {
                row: row.clone(),
                column: column.clone(),
                base: Base::of_cell(&book.place.folder, &book.matrix.name, c.plan, true)?,
                faults,
                seed: book.matrix.first_seed,
                matrix_file: &matrix_file,
            };
            match self.cell(cell, interrupt.clone(), say).await {
                Ok(Some(summary)) => book.add_search(key, summary)?,
                Ok(None) => return Ok(true),
                // A cell the search cannot take (say, a fault it cannot draw there) is left
                // as the runs made it, and said so.
                Err(MatrixRunError::Input(why)) => {
                    say(MatrixEvent::Note(format!("not explored: {why}")));
                }
                Err(e) => return Err(e),
            }
        }
        Ok(false)
    }

    /// Explores `cell` for the budget (and shrinks a find for as long again); `Ok(None)`
    /// when interrupted (nothing is recorded, so resuming explores it again).
    async fn cell(
        &self,
        cell: CellSearch<'_>,
        interrupt: CancellationToken,
        say: &mut Say,
    ) -> Result<Option<CellExplore>, MatrixRunError> {
        let (row, column) = (cell.row.clone(), cell.column.clone());
        let store = &self.req.store;
        let budget = self.budget;
        let cfg = Config {
            seed: cell.seed,
            base: cell.base,
            budget,
            shrink_budget: budget,
            only: Some(cell.faults.clone()),
            // The cell is the row's lock under the column's fault: the search varies the
            // fault, not the workload, so that what it finds is the fault's.
            fixed_workload: true,
            need: Need::parse("4/5").expect("a valid K/N"),
            confirm: 10,
            store: store.to_owned(),
            toxiproxy: self.req.toxiproxy,
            program: self.commands.program(),
            // One run at a time, as the matrix's own runs go: a cell's search must not load
            // the machine more than its runs did.
            jobs: 1,
            reuse_servers: !self.req.fresh_servers,
        };
        let command = format!(
            "{} explore {} --row {row} --column {column} --faults {} --fixed-workload --seed {} --budget {}s --shrink-budget {}s --jobs 1{} --store {}",
            self.commands.program(),
            cell.matrix_file.display(),
            cell.faults.join(","),
            cfg.seed,
            budget.as_secs(),
            budget.as_secs(),
            if self.req.fresh_servers {
                " --fresh-servers"
            } else {
                ""
            },
            store.display()
        );
        say(MatrixEvent::Note(format!(
            "explore {row} × {column} ({}) for {:.0} s: {command}",
            cell.faults.join(", "),
            budget.as_secs_f64()
        )));
        let mut tell = |line: &str| {
            say(MatrixEvent::Note(format!(
                "explore {row} × {column}: {line}"
            )))
        };
        let ex = explore(&cfg, interrupt, &mut tell)
            .await
            .map_err(|e| match e {
                ExploreError::Input(m) => {
                    MatrixRunError::Input(format!("explore {row} × {column}: {m}"))
                }
                ExploreError::Run(e) => MatrixRunError::Run {
                    source: Box::new(e),
                    reproduce: Some(command.clone()),
                },
            })?;
        if let Err(e) = lockpick_reports::write_explore_page(&ex.dir) {
            say(MatrixEvent::Note(format!("failed to {e}")));
        }
        if ex.stopped.contains("interrupted") {
            return Ok(None);
        }
        Ok(Some(summarize(&ex, &row, &column, store, command)))
    }
}

/// One cell to explore.
struct CellSearch<'a> {
    row: String,
    column: String,
    base: Base,
    faults: Vec<String>,
    seed: u64,
    /// The matrix file as the user names it, for the command that repeats the search: the
    /// one given, or the copy in the matrix folder (which `explore` reads with the folder's
    /// recorded paths).
    matrix_file: &'a PathBuf,
}

/// The fault kinds a cell's scenario runs (its column's), each once, in order.
fn column_faults(scenario: &Scenario) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in &scenario.nemesis.faults {
        let name = f.spec.name().to_owned();
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// What the search did, for the cell.
fn summarize(
    ex: &Exploration,
    row: &str,
    column: &str,
    store: &Path,
    command: String,
) -> CellExplore {
    let searched: Vec<_> = ex.searched().collect();
    let found = ex.found.and_then(|n| ex.tries.get(n - 1));
    let relative = |p: &Path| -> String {
        p.strip_prefix(store)
            .unwrap_or(p)
            .to_string_lossy()
            .into_owned()
    };
    CellExplore {
        v: CELL_EXPLORE_VERSION,
        row: row.to_owned(),
        column: column.to_owned(),
        budget_s: ex.budget_s,
        elapsed_s: ex.elapsed_s,
        runs: searched.len() as u64,
        faults_tried: (searched.iter())
            .map(|t| t.schedule.faults.len() as u64)
            .sum(),
        faults: ex.faults.clone(),
        found: ex.found_class.name().to_owned(),
        found_about: ex.found_about.clone(),
        reproduced: ex.shrunk.as_ref().map(|s| (s.hits, s.runs)),
        broke: ex.shrunk.as_ref().is_some_and(|s| s.shrunk),
        schedule: (ex.shrunk.as_ref())
            .map(|s| &s.schedule)
            .or(found.map(|t| &t.schedule))
            .map(ScheduleExt::describe),
        finding: found.and_then(|t| t.finding.clone()),
        scenario: ex.shrunk.as_ref().map(|s| s.file.display().to_string()),
        repeat: ex.shrunk.as_ref().map(|s| s.command.clone()),
        dir: relative(&ex.dir),
        stopped: ex.stopped.clone(),
        command,
    }
}
