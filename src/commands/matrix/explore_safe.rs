//! `matrix --explore-safe BUDGET`: after the fixed-size runs, `lockpick explore` on each cell
//! that came out safe, limited to the column's faults and the row's own workload, so that a
//! cell stays safe only if a search over the fault's sizes and timings did not break it
//! either. Each search is an ordinary exploration under `STORE/explore/`; its summary goes to
//! `explore/<row>--<column>.json` in the matrix folder, which resuming skips.

use crate::outcome::Failure;
use crate::printable::printable;
use lockpick_harness::explore::{explore, Base, Config, Exploration, ExploreError, Need};
use lockpick_harness::scenario::Scenario;
use lockpick_reports::matrix::{CellExplore, MATRIX_EXPLORE_DIR};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Version of the per-cell summaries.
const CELL_EXPLORE_VERSION: u32 = 1;

/// A cell's key: (row, column).
pub(super) type CellKey = (String, String);

/// The summaries of the cells explored in the matrix folder `dir`. A file that does not read
/// is ignored (and the cell explored again).
pub(super) fn read_explored(dir: &Path) -> BTreeMap<CellKey, CellExplore> {
    super::read_records(
        &dir.join(MATRIX_EXPLORE_DIR),
        "a cell exploration",
        |e: &CellExplore| (e.v == CELL_EXPLORE_VERSION).then(|| (e.row.clone(), e.column.clone())),
    )
}

/// The fault kinds a cell's scenario runs (its column's), each once, in order.
pub(super) fn column_faults(scenario: &Scenario) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in &scenario.nemesis.faults {
        let name = f.spec.name().to_owned();
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// One cell to explore.
pub(super) struct Cell<'a> {
    pub row: String,
    pub column: String,
    pub base: Base,
    pub faults: Vec<String>,
    pub seed: u64,
    /// The matrix file as the user names it, for the command that repeats the search.
    pub matrix_file: &'a Path,
}

/// Explores `cell` for `budget` (and shrinks a find for as long again); `Ok(None)` when
/// interrupted (nothing is recorded, so resuming explores it again).
pub(super) async fn explore_cell(
    cell: Cell<'_>,
    budget: Duration,
    store: &Path,
    toxiproxy: Option<std::net::SocketAddr>,
    dir: &Path,
    interrupt: CancellationToken,
) -> Result<Option<CellExplore>, Failure> {
    let (row, column) = (cell.row.clone(), cell.column.clone());
    let cfg = Config {
        seed: cell.seed,
        base: cell.base,
        budget,
        shrink_budget: budget,
        only: Some(cell.faults.clone()),
        // The cell is the row's lock under the column's fault: the search varies the fault,
        // not the workload, so that what it finds is the fault's.
        fixed_workload: true,
        need: Need::parse("4/5").expect("a valid K/N"),
        confirm: 10,
        store: store.to_owned(),
        toxiproxy,
        program: "cargo run --".to_owned(),
    };
    let command = format!(
        "cargo run -- explore {} --row {row} --column {column} --faults {} --fixed-workload --seed {} --budget {}s --shrink-budget {}s --store {}",
        cell.matrix_file.display(),
        cell.faults.join(","),
        cfg.seed,
        budget.as_secs(),
        budget.as_secs(),
        store.display()
    );
    eprintln!(
        "lockpick: explore {row} × {column} ({}) for {:.0} s: {command}",
        cell.faults.join(", "),
        budget.as_secs_f64()
    );
    let mut say = |line: &str| eprintln!("lockpick: explore {row} × {column}: {}", printable(line));
    let ex = explore(&cfg, interrupt, &mut say)
        .await
        .map_err(|e| match e {
            ExploreError::Input(m) => Failure::Usage(format!("explore {row} × {column}: {m}")),
            ExploreError::Run(e) => Failure::Run {
                source: Box::new(e),
                reproduce: Some(command.clone()),
            },
        })?;
    if let Err(e) = lockpick_reports::write_explore_page(&ex.dir) {
        eprintln!("lockpick: failed to {e}");
    }
    if ex.stopped.contains("interrupted") {
        return Ok(None);
    }
    let summary = summarize(&ex, &row, &column, store, command);
    let file = dir
        .join(MATRIX_EXPLORE_DIR)
        .join(format!("{row}--{column}.json"));
    let json = serde_json::to_vec_pretty(&summary).expect("summaries serialize");
    std::fs::create_dir_all(dir.join(MATRIX_EXPLORE_DIR)).map_err(|source| Failure::CreateDir {
        path: dir.join(MATRIX_EXPLORE_DIR),
        source,
    })?;
    lockpick_reports::write_atomic(&file, &json).map_err(Failure::WriteOutput)?;
    Ok(Some(summary))
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
        faults_tried: searched
            .iter()
            .map(|t| t.schedule.faults.len() as u64)
            .sum(),
        faults: ex.faults.clone(),
        found: ex.found_class.name().to_owned(),
        found_about: ex.found_about.clone(),
        reproduced: ex.shrunk.as_ref().map(|s| (s.hits, s.runs)),
        broke: ex.shrunk.as_ref().is_some_and(|s| s.shrunk),
        schedule: ex
            .shrunk
            .as_ref()
            .map(|s| &s.schedule)
            .or(found.map(|t| &t.schedule))
            .map(lockpick_harness::explore::ScheduleExt::describe),
        finding: found.and_then(|t| t.finding.clone()),
        scenario: ex.shrunk.as_ref().map(|s| s.file.display().to_string()),
        repeat: ex.shrunk.as_ref().map(|s| s.command.clone()),
        dir: relative(&ex.dir),
        stopped: ex.stopped.clone(),
        command,
    }
}

/// The matrix file to name in the command that repeats a search: the one given, or the copy
/// in the matrix folder (which `explore` reads with the folder's recorded paths).
pub(super) fn matrix_file_for_commands(given: Option<&PathBuf>, dir: &Path) -> PathBuf {
    given.cloned().unwrap_or_else(|| dir.join("matrix.toml"))
}
