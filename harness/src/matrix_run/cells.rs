//! A matrix's cells on disk and in order: each cell's scenario file and head written into
//! the folder, the runnable cells of the selection loaded once, the runs of one shard, and
//! the order in which a seed's runs share their servers.

use super::book::Book;
use super::place::Place;
use super::{CellKey, MatrixRequest, MatrixRunError, RunKey};
use crate::fault::{AfterRun, Refusal};
use crate::matrix::{assign, CellPlan, Matrix, RunCost};
use crate::scenario::Scenario;
use lockpick_reports::matrix::CellHead;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A cell that runs: its plan, its scenario file in the matrix folder and the scenario loaded
/// from it (whose exposure plan judges its runs).
pub(super) struct Cell<'a> {
    pub plan: &'a CellPlan,
    pub file: PathBuf,
    pub scenario: Scenario,
}

/// Makes the matrix folder (`scenarios/`, `runs/`, the matrix file as run) and writes each
/// cell's scenario file; the cells' heads, a cell the servers cannot take (or, with
/// `--external`, cannot reach) said not applicable.
pub(super) fn write_cells(
    req: &MatrixRequest,
    place: &Place,
    plans: &[CellPlan],
) -> Result<BTreeMap<CellKey, CellHead>, MatrixRunError> {
    let dir = &place.dir;
    let scenarios_dir = dir.join("scenarios");
    std::fs::create_dir_all(&scenarios_dir)
        .and_then(|()| std::fs::create_dir_all(dir.join("runs")))
        .map_err(|source| MatrixRunError::CreateDir {
            path: dir.clone(),
            source,
        })?;
    if place.copy_file {
        let text = std::fs::read(&place.file).map_err(|source| MatrixRunError::ReadInput {
            path: place.file.clone(),
            source,
        })?;
        lockpick_reports::write_atomic(&dir.join("matrix.toml"), &text)
            .map_err(MatrixRunError::Write)?;
    }
    let mut heads = BTreeMap::new();
    for plan in plans {
        let file = scenarios_dir.join(format!("{}--{}.toml", plan.row, plan.column));
        let mut refused = plan.not_applicable.clone();
        if refused.is_none() {
            lockpick_reports::write_atomic(&file, plan.text.as_bytes())
                .map_err(MatrixRunError::Write)?;
            if !req.external.is_empty() {
                let s = cell_scenario(plan, &file);
                if let Err(why) = s.check_external(&req.external) {
                    // The lock could meet the fault; these servers, not started here, cannot.
                    refused = Some(Refusal {
                        why: format!("with --external: {why}"),
                        not_here: true,
                    });
                }
            }
        }
        heads.insert(
            (plan.row.clone(), plan.column.clone()),
            head(plan, refused, &file, dir),
        );
    }
    Ok(heads)
}

/// The runnable cells of the selection (applicable, not declared untestable), each loaded
/// once from its file.
pub(super) fn runnable<'a>(plans: &'a [CellPlan], selected: &Matrix, book: &Book) -> Vec<Cell<'a>> {
    let mut cells = Vec::new();
    for plan in plans.iter().filter(|p| {
        selected.rows.iter().any(|r| r.name == p.row)
            && selected.columns.iter().any(|c| c.name == p.column)
    }) {
        let head = &book.heads[&(plan.row.clone(), plan.column.clone())];
        if head.not_applicable.is_some()
            || head.not_injectable.is_some()
            || head.declared_not_tested.is_some()
        {
            continue;
        }
        let file = (head.scenario_file.as_ref())
            .map(|f| book.place.dir.join(f))
            .expect("runnable cells have a file");
        let scenario = cell_scenario(plan, &file);
        cells.push(Cell {
            plan,
            file,
            scenario,
        });
    }
    cells
}

/// Which runs this machine makes: every run, or with a shard its share, placed here as on
/// every other machine from the same inputs.
pub(super) enum Ownership {
    All,
    /// These runs (each cell's first seeds, spread by cost).
    Runs(BTreeSet<RunKey>),
    /// Every seed of these cells: with `until` a cell's seeds depend on its own runs, which
    /// one machine must see.
    Cells(BTreeSet<CellKey>),
}

impl Ownership {
    /// What `book`'s shard (if any) makes of `cells`.
    pub fn of(book: &Book, cells: &[Cell<'_>]) -> Ownership {
        let Some(shard) = book.place.shard else {
            return Ownership::All;
        };
        let m = &book.matrix;
        if book.until.is_some() {
            let costs: Vec<RunCost> = (cells.iter())
                .map(|c| RunCost {
                    row: c.plan.row.clone(),
                    column: c.plan.column.clone(),
                    seed: m.first_seed,
                    cost_ms: c.scenario.expected_run_ms(),
                })
                .collect();
            let owner = assign(&costs, shard.n);
            return Ownership::Cells(
                (costs.into_iter().zip(owner))
                    .filter(|(_, s)| *s == shard.k)
                    .map(|(r, _)| (r.row, r.column))
                    .collect(),
            );
        }
        let runs: Vec<RunCost> = (0..m.seeds)
            .flat_map(|k| {
                let seed = m.first_seed.wrapping_add(k);
                cells.iter().map(move |c| RunCost {
                    row: c.plan.row.clone(),
                    column: c.plan.column.clone(),
                    seed,
                    cost_ms: c.scenario.expected_run_ms(),
                })
            })
            .collect();
        let owner = assign(&runs, shard.n);
        Ownership::Runs(
            (runs.into_iter().zip(owner))
                .filter(|(_, s)| *s == shard.k)
                .map(|(r, _)| (r.row, r.column, r.seed))
                .collect(),
        )
    }

    /// Whether this machine makes the run `key`.
    pub fn owns(&self, key: &RunKey) -> bool {
        match self {
            Ownership::All => true,
            Ownership::Runs(runs) => runs.contains(key),
            Ownership::Cells(cells) => cells.contains(&(key.0.clone(), key.1.clone())),
        }
    }
}

/// The order a seed's runs are made in, as indices into `cells`: row by row as the file has
/// them, and in each row first the cells whose servers a reset puts back, then those whose
/// fault leaves members to settle first (a node crash or pause), then those whose servers
/// must be restarted (a failover), then the cells whose nodes run under libfaketime (another
/// server setup). So a row's consecutive runs share one start of
/// its servers as far as they can (`ServerPool`); the order changes no run's plan or seed.
pub(super) fn reuse_order(cells: &[Cell<'_>]) -> Vec<usize> {
    let mut rows: Vec<&str> = Vec::new();
    for c in cells {
        if !rows.contains(&c.plan.row.as_str()) {
            rows.push(&c.plan.row);
        }
    }
    let mut order: Vec<usize> = (0..cells.len()).collect();
    order.sort_by_key(|&i| {
        let c = &cells[i];
        let row = rows.iter().position(|r| *r == c.plan.row).unwrap_or(0);
        let after = (c.scenario.nemesis.faults.iter())
            .map(|f| match f.spec.after_run() {
                AfterRun::Reset => 0,
                AfterRun::Settle(_) => 1,
                AfterRun::Restart(_) => 2,
            })
            .max()
            .unwrap_or(0);
        (row, c.scenario.has_clock_faults(), after)
    });
    order
}

/// The scenario a runnable cell runs, as the matrix built it, naming the cell's file it was
/// written to (which the run copies into its folder and `--seed N` reproduces).
fn cell_scenario(plan: &CellPlan, file: &Path) -> Scenario {
    let mut scenario = (plan.built.clone()).expect("a cell the row can take has its scenario");
    scenario.path = file.to_owned();
    scenario
}

/// What the record says of a cell before any run.
fn head(plan: &CellPlan, refused: Option<Refusal>, file: &Path, dir: &Path) -> CellHead {
    let runs = refused.is_none();
    let (not_applicable, not_injectable) = match refused {
        Some(r) if r.not_here => (None, Some(r.why)),
        Some(r) => (Some(r.why), None),
        None => (None, None),
    };
    CellHead {
        row: plan.row.clone(),
        column: plan.column.clone(),
        expected: plan.expect.verdict.name().to_owned(),
        expected_why: plan.expect.why.clone(),
        note: plan.note.clone(),
        declared_not_tested: plan.not_tested.clone(),
        scenario_file: runs.then(|| {
            file.strip_prefix(dir)
                .unwrap_or(file)
                .to_string_lossy()
                .into_owned()
        }),
        not_applicable,
        not_injectable,
        sizes: (plan.resolved.iter())
            .map(|r| format!("{} = {} = {} ms", r.field, r.asked, r.ms))
            .collect(),
        lease_ms: plan.promise.lease_ms,
        lease_from: plan.lease_from.clone(),
    }
}
