//! Runs a safety matrix behind one call ([`run_matrix`]): every lock (row) under every fault
//! (column) of a matrix file, each cell an ordinary scenario with the fault sized against the
//! row's lease, over several seeds; the runs of one shard; server sets kept between runs that
//! can share them; a folder resumed where it stopped; then, with `explore_safe`, a search of
//! each cell that came out safe. Everything lands in `STORE/matrix/<time>/`: the matrix file
//! as run, each cell's scenario file (what `lockpick scenario FILE --seed N` repeats), one
//! record per finished run (what resuming skips), `matrix.json` and `matrix.html`, rewritten
//! after every run. The command that calls it parses arguments and prints.

mod book;
mod cells;
mod error;
mod expectation_change;
mod explore_safe;
mod place;
mod provenance;
mod recheck;
mod rejudge;
mod seeds;
#[cfg(test)]
mod test_matrix;
mod versions;

pub use error::MatrixRunError;
pub use place::newest_matrix;
pub use recheck::Rechecked;
pub use rejudge::{judge_by_file, Rejudged};
pub use versions::server_versions;

use crate::matrix::{load_matrix_in, plan_matrix, preflight_matrix, Matrix, Shard, MAX_SEEDS};
use book::Book;
pub use lockpick_reports::matrix::Until;
use lockpick_reports::matrix::{MatrixRecord, RunSummary};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// A cell's key: (row, column).
pub(crate) type CellKey = (String, String);

/// A run's key: (row, column, seed).
pub(crate) type RunKey = (String, String, u64);

/// What to run: the command line's options, as the matrix takes them.
#[derive(Debug, Clone, Default)]
pub struct MatrixRequest {
    /// The matrix file given; `None`: the resumed folder's copy, or `default_file`.
    pub file: Option<PathBuf>,
    /// The file a fresh matrix runs when none is given.
    pub default_file: PathBuf,
    /// Resume this matrix folder (empty: the newest in the store).
    pub resume: Option<PathBuf>,
    pub store: PathBuf,
    /// Seeds per cell, instead of the file's (or the resumed folder's).
    pub seeds: Option<u64>,
    /// Only these rows and columns (empty: all); the whole file is still checked.
    pub rows: Vec<String>,
    pub faults: Vec<String>,
    pub shard: Option<Shard>,
    /// Make again the runs a resumed folder already has.
    pub redo: bool,
    /// Build the record and page from the recorded runs; run nothing.
    pub report_only: bool,
    /// With `report_only`: first check every recorded run again from its history, with this
    /// lockpick's checker, and record the new verdicts (see `recheck.rs`).
    pub recheck: bool,
    /// Search each safe cell for this long afterwards.
    pub explore_safe: Option<Duration>,
    /// Start every run's servers afresh.
    pub fresh_servers: bool,
    /// Runs at once (each on servers of its own); 0 is taken as 1.
    pub jobs: usize,
    /// Add seeds to each cell until its answer is sure (`--until`, `--max-seeds`).
    pub until: Option<Until>,
    pub toxiproxy: Option<SocketAddr>,
    pub external: Vec<SocketAddr>,
    pub resource: Option<SocketAddr>,
}

/// The command lines a matrix shows, in the words of the program that runs it.
pub trait MatrixCommands {
    /// The command that makes this matrix again: `fresh` or resumed from `dir`, holding
    /// `shard`.
    fn again(&self, fresh: bool, dir: &Path, shard: Option<Shard>) -> String;
    /// The command that resumes the matrix in `dir`.
    fn resume(&self, dir: &Path) -> String;
    /// The command that repeats one run: a cell's scenario file and its seed.
    fn reproduce(&self, scenario: &Path, seed: u64) -> String;
    /// The program and its leading words (`cargo run --`), for the searches' commands.
    fn program(&self) -> String;
}

/// What a matrix tells as it goes, for the command to print.
#[derive(Debug)]
pub enum MatrixEvent<'a> {
    /// About to run `rows` × `columns` × `seeds` of the matrix `name` in `dir`.
    Started {
        name: &'a str,
        rows: usize,
        columns: usize,
        seeds: u64,
        dir: &'a Path,
    },
    /// A run's report page was written (`Ok`), or could not be (`Err`, why).
    Report(Result<PathBuf, String>),
    /// A run finished, or failed, as recorded.
    Run(&'a RunSummary),
    /// A line for people: a file ignored, a cell not explored, a search's progress.
    Note(String),
}

/// Where a matrix tells what happens: called on the matrix's thread, and from the searches'
/// tasks, so it can be sent.
pub type Say = dyn FnMut(MatrixEvent<'_>) + Send;

/// What a matrix run made.
#[derive(Debug)]
pub struct MatrixOutcome {
    /// The record as last written (`matrix.json`).
    pub record: MatrixRecord,
    /// The matrix folder and its page.
    pub dir: PathBuf,
    pub page: PathBuf,
    /// Stopped by a signal before every run was made.
    pub interrupted: bool,
    /// What `recheck` did, when it was asked for.
    pub rechecked: Option<Rechecked>,
    /// The command that resumes it.
    pub resume: String,
    /// Its seeds per cell, as run.
    pub seeds: u64,
}

/// Runs the matrix `req` asks for until it is done or `interrupt` is cancelled, telling
/// `say` as it goes.
pub async fn run_matrix(
    req: &MatrixRequest,
    commands: &dyn MatrixCommands,
    interrupt: CancellationToken,
    say: &mut Say,
) -> Result<MatrixOutcome, MatrixRunError> {
    let place = place::place(req)?;
    let mut full = load_matrix_in(&place.file, &place.folder)?;
    full.seeds = seeds(req, place.recorded.as_ref())?.unwrap_or(full.seeds);
    let until = until(req, place.recorded.as_ref(), full.seeds)?;
    if let (None, Some(u), false) = (req.until, until, req.report_only) {
        // Kept from the folder, not asked for: say so, since it decides how many runs follow.
        say(MatrixEvent::Note(format!(
            "resuming with the matrix's recorded --until {}% --max-seeds {} (give --until and --max-seeds to change them)",
            u.bound * 100.0,
            u.max_seeds
        )));
    }
    let selected = select(&full, req)?;
    refuse_explore_safe(req, place.shard)?;
    let plans = plan_matrix(&full)?;
    // The whole file, not only the selected rows, before any run; a page rebuilt from
    // recorded runs (report-only) needs no adapter on this machine.
    if !req.report_only {
        preflight_matrix(&full, &plans)?;
    }
    let heads = cells::write_cells(req, &place, &plans)?;
    let mut book = Book::open(req, commands, full, place, heads, say);
    book.until = until;
    let rechecked = if req.recheck {
        if !req.report_only {
            return Err(MatrixRunError::Input(
                "read --recheck: only with --report-only: a recheck runs nothing".to_owned(),
            ));
        }
        let by = format!(
            "lockpick {} ({})",
            crate::LOCKPICK_BUILD,
            commands.program()
        );
        Some(recheck::recheck_runs(&mut book, &req.store, &by, say)?)
    } else {
        None
    };
    book.write()?;
    say(MatrixEvent::Started {
        name: &book.matrix.name,
        rows: selected.rows.len(),
        columns: selected.columns.len(),
        seeds: book.matrix.seeds,
        dir: &book.place.dir,
    });
    let cells = if req.report_only {
        Vec::new()
    } else {
        cells::runnable(&plans, &selected, &book)
    };
    let mut interrupted =
        seeds::run_seeds(req, commands, &cells, &mut book, interrupt.clone(), say).await?;
    if let (Some(budget), false) = (req.explore_safe, interrupted) {
        let search = explore_safe::Search {
            req,
            commands,
            budget,
        };
        interrupted = search.cells(&cells, &mut book, interrupt, say).await?;
    }
    let mut record = book.record();
    record.interrupted = interrupted;
    let page = book.write_record(&record)?;
    Ok(MatrixOutcome {
        rechecked,
        record,
        page,
        interrupted,
        resume: book.resume_cmd.clone(),
        seeds: book.matrix.seeds,
        dir: book.place.dir,
    })
}

/// The seeds per cell: `--seeds`, else a resumed matrix's own (not the file's default, which
/// would leave a 10-seed matrix's later seeds out of its page); `None`: the file's.
fn seeds(
    req: &MatrixRequest,
    recorded: Option<&MatrixRecord>,
) -> Result<Option<u64>, MatrixRunError> {
    if let Some(s) = req.seeds {
        if !(1..=MAX_SEEDS).contains(&s) {
            return Err(MatrixRunError::Input(format!(
                "read --seeds: {s} is out of range; allowed: 1 to {MAX_SEEDS}"
            )));
        }
        return Ok(Some(s));
    }
    Ok(recorded
        .map(|r| r.seeds)
        .filter(|s| (1..=MAX_SEEDS).contains(s)))
}

/// Seeds until sure: `--until`, else what a resumed matrix was run with; its most seeds at
/// least the cells' first seeds and at most [`MAX_SEEDS`].
fn until(
    req: &MatrixRequest,
    recorded: Option<&MatrixRecord>,
    seeds: u64,
) -> Result<Option<Until>, MatrixRunError> {
    let Some(u) = req.until.or(recorded.and_then(|r| r.until)) else {
        return Ok(None);
    };
    if !(u.bound > 0.0 && u.bound < 1.0) {
        return Err(MatrixRunError::Input(format!(
            "read --until: {}% is out of range; allowed: above 0% and below 100%",
            u.bound * 100.0
        )));
    }
    if !(seeds..=MAX_SEEDS).contains(&u.max_seeds) {
        return Err(MatrixRunError::Input(format!(
            "read --max-seeds: {} is out of range; allowed: {seeds} (the seeds every cell runs first) to {MAX_SEEDS}",
            u.max_seeds
        )));
    }
    Ok(Some(u))
}

/// `explore_safe` needs the whole matrix's verdicts and runs: not on a shard, not report-only.
fn refuse_explore_safe(req: &MatrixRequest, shard: Option<Shard>) -> Result<(), MatrixRunError> {
    if req.explore_safe.is_none() {
        return Ok(());
    }
    if let Some(shard) = shard {
        return Err(MatrixRunError::Input(format!(
            "read --explore-safe: not with shard {shard}: a shard does not know which cells came out safe; merge the shards (`lockpick merge`), then explore the merged matrix with `lockpick matrix --resume DIR --explore-safe BUDGET`"
        )));
    }
    if req.report_only {
        return Err(MatrixRunError::Input(
            "read --explore-safe: not with --report-only, which runs nothing".to_owned(),
        ));
    }
    Ok(())
}

/// Keeps the rows and columns named in `--rows`/`--faults`; an unknown name is an error.
fn select(m: &Matrix, req: &MatrixRequest) -> Result<Matrix, MatrixRunError> {
    let mut out = m.clone();
    for (flag, wanted, names) in [
        (
            "--rows",
            &req.rows,
            m.rows.iter().map(|r| r.name.clone()).collect::<Vec<_>>(),
        ),
        (
            "--faults",
            &req.faults,
            m.columns.iter().map(|c| c.name.clone()).collect(),
        ),
    ] {
        if let Some(bad) = wanted.iter().find(|w| !names.contains(w)) {
            return Err(MatrixRunError::Input(format!(
                "read {flag}: {bad:?} is not in the matrix; allowed: {}",
                names.join(", ")
            )));
        }
    }
    if !req.rows.is_empty() {
        out.rows.retain(|r| req.rows.contains(&r.name));
    }
    if !req.faults.is_empty() {
        out.columns.retain(|c| req.faults.contains(&c.name));
    }
    Ok(out)
}
