//! `lockpick explore`: search for a fault schedule that breaks a scenario's lock, shrink it,
//! and write the shrunk scenario file and the exploration's page.

use crate::cli::ExploreArgs;
use crate::outcome::{Exit, Failure, Outcome};
use crate::printable::printable;
use crate::run_args::runtime;
use lockpick_checker::verdict::Verdict;
use lockpick_harness::explore::{
    explore as search, Base, Config, ExploreError, Found, Need, ScheduleExt,
};
use lockpick_harness::matrix::{folder_of, load_matrix_in, plan_cell};
use lockpick_harness::scenario::{find_scenario, load_scenario, ScenarioError};

pub(super) fn explore(args: ExploreArgs) -> Outcome {
    let need =
        Need::parse(&args.repro).map_err(|e| Failure::usage(format!("read --repro: {e}")))?;
    if !(1..=100).contains(&args.confirm) {
        return Err(Failure::usage(format!(
            "read --confirm: {} is out of range; allowed: 1 to 100",
            args.confirm
        )));
    }
    let (base, seed) = match &args.row {
        None => {
            // Loaded to run: the adapter and everything it needs is checked here.
            let scenario = load_scenario(&args.scenario)?;
            let path = find_scenario(&args.scenario)?;
            let text = std::fs::read_to_string(&path).map_err(|source| ScenarioError::Io {
                path: path.clone(),
                source,
            })?;
            (Base::new(&path, &text)?, scenario.seed)
        }
        Some(row) => matrix_row(&args.scenario, row, args.column.as_deref())?,
    };
    let cfg = Config {
        seed: args.seed.unwrap_or(seed),
        base,
        budget: args.budget,
        shrink_budget: args.shrink_budget,
        only: args.faults.clone(),
        fixed_workload: args.fixed_workload,
        need,
        confirm: args.confirm,
        store: args.store.clone(),
        toxiproxy: args.toxiproxy,
        program: crate::reproduce::program().to_owned(),
        jobs: usize::from(args.jobs),
        reuse_servers: !args.fresh_servers,
    };
    let rt = runtime();
    let result = rt.block_on(async {
        let interrupt = crate::signals::install()?;
        let mut say = |line: &str| eprintln!("lockpick: {}", printable(line));
        search(&cfg, interrupt, &mut say)
            .await
            .map_err(|e| match e {
                ExploreError::Input(m) => Failure::Usage(format!("explore {}: {m}", args.scenario)),
                ExploreError::Run(e) => Failure::Run {
                    source: Box::new(e),
                    reproduce: None,
                },
            })
    });
    drop(rt);
    let ex = result?;
    let page = lockpick_reports::write_explore_page(&ex.dir);
    let searched = ex.searched().count();
    outln!(
        "explore {}: {} run(s) searched in {:.0} s ({}); found: {}",
        ex.base,
        searched,
        ex.elapsed_s,
        ex.stopped,
        ex.found_class.name()
    );
    if let Some(n) = ex.found {
        outln!("  run {n}: {}", ex.found_about);
        if let Some(f) = ex.tries[n - 1].finding.as_deref() {
            outln!("  {}", printable(f));
        }
    }
    if let Some(s) = &ex.shrunk {
        outln!("  {}", s.schedule.shrunk_headline(s.shrunk));
        outln!("  reproduced in {}/{} runs", s.hits, s.runs);
        outln!("  scenario: {}", s.file.display());
        outln!("  repeat:   {}", s.command);
    }
    match page {
        Ok(p) => outln!("  page: {}", p.display()),
        Err(e) => eprintln!("lockpick: failed to {e}"),
    }
    outln!("  explore.json: {}", ex.dir.join("explore.json").display());
    if ex.stopped.contains("interrupted") {
        return Ok(Exit::Interrupted);
    }
    Ok(Exit::Verdict(match ex.found_class {
        Found::Nothing => Verdict::Valid,
        Found::LockBug | Found::Clock | Found::NodeRestart | Found::Kleppmann => Verdict::Invalid,
    }))
}

/// The base of `--row ROW` of the matrix file `file`: the row as the matrix runs it under
/// `column` (default: its first), whose fault the draw replaces, and the matrix's first seed.
/// `file` may be the copy in a matrix folder: its relative paths then resolve against the
/// folder the matrix was first given in, as `matrix --resume` does.
fn matrix_row(file: &str, row: &str, column: Option<&str>) -> Result<(Base, u64), Failure> {
    let path = std::path::Path::new(file);
    let folder = path
        .parent()
        .and_then(lockpick_reports::matrix::recorded_folder)
        .unwrap_or_else(|| folder_of(path));
    let m = load_matrix_in(path, &folder)?;
    let allowed = |names: Vec<&str>| names.join(", ");
    let r = m.rows.iter().find(|r| r.name == row).ok_or_else(|| {
        Failure::usage(format!(
            "read --row: no row {row:?} in {file}; allowed: {}",
            allowed(m.rows.iter().map(|r| r.name.as_str()).collect())
        ))
    })?;
    let col = match column {
        None => m
            .columns
            .first()
            .ok_or_else(|| Failure::usage(format!("explore {file}: the matrix has no column")))?,
        Some(c) => m.columns.iter().find(|x| x.name == c).ok_or_else(|| {
            Failure::usage(format!(
                "read --column: no column {c:?} in {file}; allowed: {}",
                allowed(m.columns.iter().map(|c| c.name.as_str()).collect())
            ))
        })?,
    };
    let cell = plan_cell(&m, r, col)?;
    if let Some(why) = &cell.not_applicable {
        return Err(Failure::usage(format!(
            "explore {file} --row {row} --column {}: the cell is n/a: {why}",
            col.name
        )));
    }
    if let Some(built) = &cell.built {
        built.client.options.preflight()?;
    }
    let base = Base::of_cell(&folder, &m.name, &cell, column.is_some())?;
    Ok((base, m.first_seed))
}
