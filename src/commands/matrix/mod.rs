//! `lockpick matrix`: every lock (row) under every fault (column) of a matrix file, over
//! several seeds, as [`lockpick_harness::matrix_run`] runs it. This command turns its options
//! into a request, names the command lines the matrix shows, prints what the matrix tells as
//! it goes, then the heatmap, and writes the markdown table when asked.

mod diff;
mod render;

use crate::cli::{MatrixAction, MatrixArgs};
use crate::outcome::{Exit, Failure, Outcome};
use crate::printable::printable;
use crate::reproduce::Reproduce;
use crate::run_args::runtime;
use lockpick_harness::matrix::Shard;
use lockpick_harness::matrix_run::{run_matrix, MatrixCommands, MatrixEvent, MatrixRequest, Until};
use lockpick_reports::matrix::{
    cell_label, matrix_markdown, record_beside, stale_notes, CellStatus, MatrixRecord, RunSummary,
};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The most seeds `--until` gives a cell when `--max-seeds` does not say.
const DEFAULT_MAX_SEEDS: u64 = 100;

/// The matrix `cargo run -- matrix` runs without a file argument.
const DEFAULT_FILE: &str = "scenarios/matrix/default.toml";

pub fn matrix(args: MatrixArgs) -> Outcome {
    match &args.action {
        Some(MatrixAction::Diff(d)) => diff::diff(d),
        Some(MatrixAction::Render(r)) => render::render(r),
        None => run(&args),
    }
}

/// Runs the matrix `args` ask for (also what `merge` calls to build a merged matrix's page).
pub(in crate::commands) fn run(args: &MatrixArgs) -> Outcome {
    let req = request(args);
    let started = Instant::now();
    let rt = runtime();
    let outcome = rt.block_on(async {
        let interrupt = crate::signals::install()?;
        let mut say = |event: MatrixEvent<'_>| tell(event);
        Ok::<_, Failure>(run_matrix(&req, &Commands(args), interrupt, &mut say).await?)
    });
    drop(rt);
    let outcome = outcome?;
    print_table(&outcome.record);
    if let Some(r) = &outcome.rechecked {
        outln!(
            "rechecked: {} run(s) from their histories, {} verdict(s) changed, {} kept as recorded",
            r.runs,
            r.changed.len(),
            r.kept.len()
        );
        for (row, column, seed, was, now) in &r.changed {
            outln!("  {row} × {column} seed {seed}: {was} -> {now}");
        }
    }
    outln!(
        "matrix: {} ({:.0} s)",
        outcome.page.display(),
        started.elapsed().as_secs_f64()
    );
    if let Some(md) = &args.markdown {
        let mut again = format!("{} matrix", crate::reproduce::program());
        if let Some(f) = &args.file {
            again.push_str(&format!(" {}", f.display()));
        }
        again.push_str(&format!(" --seeds {}", outcome.seeds));
        // How seeds were added and how many runs went at once are the page's figures too.
        if let Some(u) = outcome.record.until {
            again.push_str(&format!(
                " --until {}% --max-seeds {}",
                u.bound * 100.0,
                u.max_seeds
            ));
        }
        if args.jobs != 1 {
            again.push_str(&format!(" --jobs {}", args.jobs));
        }
        again.push_str(&format!(" --markdown {}", md.display()));
        // A note its runs disagree with stops the publication here, after the record and the
        // page (which marks it) are written: correct the note, then `--report-only`.
        let mut text = matrix_markdown(&outcome.record, &again)?;
        // The page it replaces, if its record is beside it: which cells moved since.
        let before = std::fs::read(record_beside(md))
            .ok()
            .and_then(|b| serde_json::from_slice::<MatrixRecord>(&b).ok())
            .filter(|old| old.started != outcome.record.started);
        if let Some(old) = &before {
            text.push_str(&lockpick_reports::matrix::since_section(
                old,
                &outcome.record,
            ));
        }
        lockpick_reports::write_atomic(md, text.as_bytes()).map_err(Failure::WriteOutput)?;
        // The record beside the page, so that a committed page keeps what its notes are
        // checked against (the runs' seeds and verdicts) and can be rendered again.
        let json = serde_json::to_vec_pretty(&outcome.record).expect("records serialize");
        lockpick_reports::write_atomic(&record_beside(md), &json).map_err(Failure::WriteOutput)?;
        outln!("markdown: {}", md.display());
    }
    if let Some(junit) = &args.junit {
        let xml = lockpick_reports::matrix::matrix_junit(&outcome.record);
        lockpick_reports::write_atomic(junit, xml.as_bytes()).map_err(Failure::WriteOutput)?;
        outln!("junit: {}", junit.display());
    }
    let record = &outcome.record;
    let errors = (record.cells.iter())
        .flat_map(|c| &c.runs)
        .filter(|r| r.error.is_some())
        .count();
    if outcome.interrupted {
        eprintln!("lockpick: interrupted; continue with: {}", outcome.resume);
        Ok(Exit::Interrupted)
    } else if record.mismatches() > 0 {
        Ok(Exit::SuiteMismatch)
    } else if errors > 0 {
        Err(Failure::harness(format!(
            "make {errors} run(s) of the matrix (see the ERROR lines above); run them again with: {}",
            outcome.resume
        )))
    } else {
        Ok(Exit::Done)
    }
}

/// The matrix's options as the harness takes them.
fn request(args: &MatrixArgs) -> MatrixRequest {
    let local = PathBuf::from(DEFAULT_FILE);
    let default_file = if local.is_file() {
        local
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_FILE)
    };
    MatrixRequest {
        file: args.file.clone(),
        default_file,
        resume: args.resume.clone(),
        store: args.store.clone(),
        seeds: args.seeds,
        rows: args.rows.clone(),
        faults: args.faults.clone(),
        shard: args.shard,
        redo: args.redo,
        report_only: args.report_only,
        recheck: args.recheck,
        explore_safe: args.explore_safe,
        fresh_servers: args.fresh_servers,
        jobs: usize::from(args.jobs),
        until: args.until.map(|bound| Until {
            bound,
            max_seeds: args.max_seeds.unwrap_or(DEFAULT_MAX_SEEDS),
        }),
        toxiproxy: args.toxiproxy,
        external: args.external.clone(),
        resource: args.resource,
    }
}

/// Prints what the matrix tells: its start and each run's line on stderr, each run's report
/// on stdout.
fn tell(event: MatrixEvent<'_>) {
    match event {
        MatrixEvent::Started {
            name,
            rows,
            columns,
            seeds,
            dir,
        } => eprintln!(
            "lockpick: matrix {name} ({rows} row(s) × {columns} fault(s) × {seeds} seed(s)) in {}",
            dir.display()
        ),
        MatrixEvent::Report(Ok(path)) => outln!("  report: {}", path.display()),
        MatrixEvent::Report(Err(why)) => eprintln!("lockpick: failed to {why}"),
        MatrixEvent::Run(summary) => eprintln!("{}", progress_line(summary)),
        MatrixEvent::Note(line) => eprintln!("lockpick: {}", printable(&line)),
    }
}

/// The command lines of a matrix, in the words of the running binary
/// ([`crate::reproduce::program`]).
struct Commands<'a>(&'a MatrixArgs);

impl MatrixCommands for Commands<'_> {
    fn again(&self, fresh: bool, dir: &Path, shard: Option<Shard>) -> String {
        let args = self.0;
        let mut cmd = format!("{} matrix", crate::reproduce::program());
        if !fresh {
            cmd.push_str(&format!(" --resume {}", dir.display()));
        }
        if let Some(f) = &args.file {
            cmd.push_str(&format!(" {}", f.display()));
        }
        if let Some(s) = args.seeds {
            cmd.push_str(&format!(" --seeds {s}"));
        }
        if !args.rows.is_empty() {
            cmd.push_str(&format!(" --rows {}", args.rows.join(",")));
        }
        if !args.faults.is_empty() {
            cmd.push_str(&format!(" --faults {}", args.faults.join(",")));
        }
        if let (true, Some(shard)) = (fresh, shard) {
            cmd.push_str(&format!(" --shard {shard}"));
        }
        cmd.push_str(&crate::reproduce::server_flags(
            args.toxiproxy,
            &args.external,
            args.resource,
        ));
        if args.jobs != 1 {
            cmd.push_str(&format!(" --jobs {}", args.jobs));
        }
        if let Some(budget) = args.explore_safe {
            cmd.push_str(&format!(" --explore-safe {}s", budget.as_secs()));
        }
        if let Some(until) = args.until {
            cmd.push_str(&format!(" --until {}%", until * 100.0));
        }
        if let Some(max) = args.max_seeds {
            cmd.push_str(&format!(" --max-seeds {max}"));
        }
        if let Some(md) = &args.markdown {
            cmd.push_str(&format!(" --markdown {}", md.display()));
        }
        cmd.push_str(&crate::reproduce::store_flag(&args.store));
        cmd
    }

    fn resume(&self, dir: &Path) -> String {
        let mut cmd = format!(
            "{} matrix --resume {}",
            crate::reproduce::program(),
            dir.display()
        );
        cmd.push_str(&crate::reproduce::store_flag(&self.0.store));
        cmd
    }

    fn reproduce(&self, scenario: &Path, seed: u64) -> String {
        let args = self.0;
        Reproduce::on_servers(
            scenario.display().to_string(),
            seed,
            args.toxiproxy,
            &args.external,
            args.resource,
            &args.store,
        )
    }

    fn program(&self) -> String {
        crate::reproduce::program().to_owned()
    }
}

/// A run's line: its cell, seed, verdict (or why it tested nothing, or failed) and the
/// command that repeats it.
fn progress_line(r: &RunSummary) -> String {
    let what = match (&r.verdict, &r.error, &r.not_exposed) {
        (_, Some(e), _) => format!("ERROR: failed to {e}"),
        (Some(v), None, Some(why)) if v == "valid" || v == "not-exposed" => {
            format!("not exposed: {why}")
        }
        (Some(v), None, _) => format!("{v} ({} violation(s))", r.violations),
        (None, None, _) => "no verdict".to_owned(),
    };
    format!(
        "{} × {} seed {}: {what} [{:.1} s]; reproduce: {}",
        r.row, r.column, r.seed, r.secs, r.reproduce
    )
}

/// The heatmap on standard output.
fn print_table(record: &MatrixRecord) {
    let w = record
        .rows
        .iter()
        .map(|r| r.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let cw = record
        .columns
        .iter()
        .map(|c| c.name.len())
        .max()
        .unwrap_or(8)
        .max(14);
    out!("{:<w$}", "lock");
    for c in &record.columns {
        out!(" {:<cw$}", c.name);
    }
    outln!();
    for r in &record.rows {
        out!("{:<w$}", r.name);
        for c in &record.columns {
            let text = record
                .cell(&r.name, &c.name)
                .map_or("—".to_owned(), cell_label);
            out!(" {text:<cw$}");
        }
        outln!();
    }
    for c in record.cells.iter().filter(|c| c.mismatch) {
        outln!(
            "MISMATCH {} × {}: {} (expected {}: {})",
            c.row,
            c.column,
            lockpick_reports::matrix::cell_sentence(c),
            c.expected,
            c.expected_why
        );
    }
    for c in &record.cells {
        if let CellStatus::NotExposed(why) = &c.status {
            outln!("not exposed {} × {}: {why}", c.row, c.column);
        }
    }
    // Shown whether or not a markdown is asked for: the page marks these notes, and a later
    // publication would refuse them.
    for s in stale_notes(record) {
        outln!(
            "STALE NOTE {} × {}: {}",
            s.row,
            s.column,
            s.problems.join("; ")
        );
    }
}
