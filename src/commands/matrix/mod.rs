//! `lockpick matrix`: every lock (row) under every fault (column) of a matrix file, each cell
//! an ordinary scenario with the fault sized against the row's lease, run over several seeds.
//! Each cell runs the scenario the matrix planned for it (`CellPlan::built`). Everything lands
//! in `STORE/matrix/<time>/`: the matrix file as run, the scenario file of each cell (what
//! `lockpick scenario FILE --seed N` repeats), one record per finished run (what `--resume`
//! skips), `matrix.json` and `matrix.html`, rewritten after every run. With `--explore-safe`,
//! the cells that came out safe are then searched ([`explore_safe`]).

mod explore_safe;
mod versions;

use crate::cli::MatrixArgs;

use super::suite::relative_run;
use crate::outcome::{Exit, Failure, Outcome};
use crate::reproduce::Reproduce;
use crate::run_args::{runtime, write_report};
use lockpick_checker::history::read_history;
use lockpick_harness::client::process::read_hello;
use lockpick_harness::explore::Base;
use lockpick_harness::fault::AfterRun;
use lockpick_harness::matrix::{
    assign, folder_of, load_matrix_in, plan_matrix, preflight_matrix, CellPlan, Matrix, RunCost,
    Shard, MAX_SEEDS,
};
use lockpick_harness::run::{run_scenario_in, utc_stamp, RunOptions, ServerPool};
use lockpick_harness::scenario::Scenario;
use lockpick_reports::matrix::{
    aggregate, cell_label, failed_run, matrix_markdown, summarize_run, with_exploration,
    write_matrix, CellExplore, CellHead, CellStatus, ColumnInfo, MatrixRecord, Needs, RowInfo,
    RunPlace, RunSummary, MATRIX_DIR, MATRIX_VERSION,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

/// The matrix `cargo run -- matrix` runs without a file argument.
const DEFAULT_FILE: &str = "scenarios/matrix/default.toml";

type RunKey = (String, String, u64);

pub fn matrix(args: MatrixArgs) -> Outcome {
    run(&args)
}

/// Where the matrix lives and where its file comes from.
struct Place {
    dir: PathBuf,
    file: PathBuf,
    /// The folder the matrix file was given in: its relative paths resolve against it.
    folder: PathBuf,
    started: String,
    fresh: bool,
    /// Copy `file` into the folder as its `matrix.toml`.
    copy_file: bool,
    /// The shard of the runs this folder holds (`--shard`, or the one it was started with).
    shard: Option<Shard>,
    /// For a merged matrix: the shards whose runs are missing.
    missing_shards: Vec<String>,
    /// The folder's `matrix.json` when resuming, read once.
    recorded: Option<MatrixRecord>,
}

fn place(args: &MatrixArgs) -> Result<Place, Failure> {
    if let Some(resume) = &args.resume {
        let dir = if resume.as_os_str().is_empty() {
            newest_matrix(&args.store.join(MATRIX_DIR)).ok_or_else(|| {
                Failure::Usage(format!(
                    "resume: no matrix under {}",
                    args.store.join(MATRIX_DIR).display()
                ))
            })?
        } else {
            resume.clone()
        };
        let copy = dir.join("matrix.toml");
        if !copy.is_file() {
            return Err(Failure::Usage(format!(
                "resume {}: it holds no matrix.toml (is it a folder `lockpick matrix` made?)",
                dir.display()
            )));
        }
        let started = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let recorded = std::fs::read(dir.join("matrix.json"))
            .ok()
            .and_then(|bytes| serde_json::from_slice::<MatrixRecord>(&bytes).ok());
        // A file given with --resume replaces the copy (new expectations or notes); the runs
        // already made are kept, so a changed fault size needs --redo.
        let (file, copy_file, folder) = match &args.file {
            Some(f) => (f.clone(), true, folder_of(f)),
            None => {
                let folder = recorded
                    .as_ref()
                    .and_then(|r| r.file_folder.as_ref())
                    .map_or_else(|| dir.clone(), PathBuf::from);
                (copy, false, folder)
            }
        };
        let (was, missing_shards) = recorded_shard(&dir, recorded.as_ref())?;
        let shard = match (args.shard, was) {
            (Some(asked), Some(was)) if asked != was => {
                return Err(Failure::Usage(format!(
                    "resume {} with --shard {asked}: it holds shard {was}; allowed: --shard {was}, or no --shard",
                    dir.display()
                )))
            }
            (asked, was) => asked.or(was),
        };
        return Ok(Place {
            dir,
            file,
            folder,
            started,
            fresh: false,
            copy_file,
            shard,
            missing_shards,
            recorded,
        });
    }
    let file = match &args.file {
        Some(f) => f.clone(),
        None => {
            let local = PathBuf::from(DEFAULT_FILE);
            if local.is_file() {
                local
            } else {
                Path::new(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_FILE)
            }
        }
    };
    let started = utc_stamp(SystemTime::now());
    let root = args.store.join(MATRIX_DIR);
    // Two matrices started in one second get folders of their own.
    let mut dir = root.join(&started);
    let mut n = 2;
    while dir.exists() {
        dir = root.join(format!("{started}-{n}"));
        n += 1;
    }
    let started = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or(started);
    Ok(Place {
        dir,
        folder: folder_of(&file),
        file,
        started,
        fresh: true,
        copy_file: true,
        shard: args.shard,
        missing_shards: Vec::new(),
        recorded: None,
    })
}

/// The shard a matrix folder was started as, and the shards a merged one lacks, as its
/// `matrix.json` (`record`, read from `dir`) records them.
fn recorded_shard(
    dir: &Path,
    record: Option<&MatrixRecord>,
) -> Result<(Option<Shard>, Vec<String>), Failure> {
    let Some(record) = record else {
        return Ok((None, Vec::new()));
    };
    let shard = match &record.shard {
        Some(s) => Some(s.parse::<Shard>().map_err(|e| {
            Failure::Usage(format!(
                "read {}: shard {e}",
                dir.join("matrix.json").display()
            ))
        })?),
        None => None,
    };
    Ok((shard, record.missing_shards.clone()))
}

/// The newest matrix folder (names are UTC stamps, so the greatest name).
pub(in crate::commands) fn newest_matrix(root: &Path) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("matrix.toml").is_file())
        .collect();
    dirs.sort();
    dirs.pop()
}

/// Keeps the rows and columns named in `--rows`/`--faults`; an unknown name is an error.
fn select(m: &Matrix, args: &MatrixArgs) -> Result<Matrix, Failure> {
    let mut out = m.clone();
    for (flag, wanted, names) in [
        (
            "--rows",
            &args.rows,
            m.rows.iter().map(|r| r.name.clone()).collect::<Vec<_>>(),
        ),
        (
            "--faults",
            &args.faults,
            m.columns.iter().map(|c| c.name.clone()).collect(),
        ),
    ] {
        if let Some(bad) = wanted.iter().find(|w| !names.contains(w)) {
            return Err(Failure::Usage(format!(
                "read {flag}: {bad:?} is not in the matrix; allowed: {}",
                names.join(", ")
            )));
        }
    }
    if !args.rows.is_empty() {
        out.rows.retain(|r| args.rows.contains(&r.name));
    }
    if !args.faults.is_empty() {
        out.columns.retain(|c| args.faults.contains(&c.name));
    }
    Ok(out)
}

pub(in crate::commands) fn run(args: &MatrixArgs) -> Outcome {
    let place = place(args)?;
    let mut full = load_matrix_in(&place.file, &place.folder)?;
    if let Some(s) = args.seeds {
        if !(1..=MAX_SEEDS).contains(&s) {
            return Err(Failure::Usage(format!(
                "read --seeds: {s} is out of range; allowed: 1 to {MAX_SEEDS}"
            )));
        }
        full.seeds = s;
    } else if let Some(s) = place
        .recorded
        .as_ref()
        .map(|r| r.seeds)
        .filter(|s| (1..=MAX_SEEDS).contains(s))
    {
        // Resumed without --seeds: the seeds the matrix was run with, not the file's default,
        // which would leave a 10-seed matrix's later seeds out of its page.
        full.seeds = s;
    }
    let selected = select(&full, args)?;
    if args.explore_safe.is_some() {
        if let Some(shard) = place.shard {
            return Err(Failure::Usage(format!(
                "read --explore-safe: not with shard {shard}: a shard does not know which cells came out safe; merge the shards (`lockpick merge`), then explore the merged matrix with `lockpick matrix --resume DIR --explore-safe BUDGET`"
            )));
        }
        if args.report_only {
            return Err(Failure::Usage(
                "read --explore-safe: not with --report-only, which runs nothing".to_owned(),
            ));
        }
    }
    let plans = plan_matrix(&full)?;
    // The whole file, not only the selected rows, before any run; a page rebuilt from
    // recorded runs (--report-only) needs no adapter on this machine.
    if !args.report_only {
        preflight_matrix(&full, &plans)?;
    }
    let dir = &place.dir;
    let scenarios_dir = dir.join("scenarios");
    std::fs::create_dir_all(&scenarios_dir)
        .and_then(|()| std::fs::create_dir_all(dir.join("runs")))
        .map_err(|source| Failure::CreateDir {
            path: dir.clone(),
            source,
        })?;
    if place.copy_file {
        let text = std::fs::read(&place.file).map_err(|source| Failure::ReadInput {
            path: place.file.clone(),
            source,
        })?;
        lockpick_reports::write_atomic(&dir.join("matrix.toml"), &text)
            .map_err(Failure::WriteOutput)?;
    }
    let mut heads: BTreeMap<(String, String), CellHead> = BTreeMap::new();
    for plan in &plans {
        let file = scenarios_dir.join(format!("{}--{}.toml", plan.row, plan.column));
        let mut not_applicable = plan.not_applicable.clone();
        if not_applicable.is_none() {
            lockpick_reports::write_atomic(&file, plan.text.as_bytes())
                .map_err(Failure::WriteOutput)?;
            if !args.external.is_empty() {
                let s = cell_scenario(plan, &file);
                if let Err(why) = s.check_external(&args.external) {
                    not_applicable = Some(format!("with --external: {why}"));
                }
            }
        }
        heads.insert(
            (plan.row.clone(), plan.column.clone()),
            head(plan, not_applicable, &file, dir),
        );
    }
    let mut done = read_runs(&dir.join("runs"));
    let mut explored = explore_safe::read_explored(dir);
    let command = command(args, &place);
    // A page rebuilt from recorded runs names the servers they ran on, not this machine's.
    let recorded_versions = place
        .recorded
        .as_ref()
        .map(|r| r.server_versions.clone())
        .filter(|v| !v.is_empty());
    let versions = match (args.report_only, recorded_versions) {
        (true, Some(v)) => v,
        _ => versions::server_versions(),
    };
    let mut record = build_record(&full, &place, &command, &versions, &heads, &done, &explored);
    let mut resume_cmd = format!("cargo run -- matrix --resume {}", dir.display());
    if args.store != Path::new("store") {
        resume_cmd.push_str(&format!(" --store {}", args.store.display()));
    }
    write_matrix(&record, dir, &resume_cmd).map_err(Failure::WriteOutput)?;
    eprintln!(
        "lockpick: matrix {} ({} row(s) × {} fault(s) × {} seed(s)) in {}",
        full.name,
        selected.rows.len(),
        selected.columns.len(),
        full.seeds,
        dir.display()
    );
    let started = Instant::now();
    let rt = runtime();
    let mut interrupted = false;
    let outcome = rt.block_on(async {
        let interrupt = crate::signals::install()?;
        // The runnable cells of the selection, each loaded once.
        let mut cells = Vec::new();
        for plan in plans.iter().filter(|p| {
            selected.rows.iter().any(|r| r.name == p.row)
                && selected.columns.iter().any(|c| c.name == p.column)
        }) {
            let head = &heads[&(plan.row.clone(), plan.column.clone())];
            if head.not_applicable.is_some()
                || head.declared_not_tested.is_some()
                || args.report_only
            {
                continue;
            }
            let file = head
                .scenario_file
                .as_ref()
                .map(|f| dir.join(f))
                .expect("runnable cells have a file");
            let scenario = cell_scenario(plan, &file);
            let needs = Needs {
                verbs: scenario
                    .nemesis
                    .faults
                    .first()
                    .map(|f| f.spec.verb())
                    .into_iter()
                    .collect(),
                outlast_lease: plan.must_outlast_lease,
                planned_lease_ms: Some(plan.promise.lease_ms),
            };
            cells.push((plan, file, scenario, needs));
        }
        // With --shard, the runs of this shard: every run of the selection is placed, here as on
        // every other machine, and only this shard's are made.
        let mine = place.shard.map(|shard| {
            let runs: Vec<RunCost> = (0..full.seeds)
                .flat_map(|k| {
                    let seed = full.first_seed.wrapping_add(k);
                    cells.iter().map(move |(plan, _, scenario, _)| RunCost {
                        row: plan.row.clone(),
                        column: plan.column.clone(),
                        seed,
                        cost_ms: scenario.expected_run_ms(),
                    })
                })
                .collect();
            let owner = assign(&runs, shard.n);
            runs.into_iter()
                .zip(owner)
                .filter(|(_, s)| *s == shard.k)
                .map(|(r, _)| (r.row, r.column, r.seed))
                .collect::<std::collections::BTreeSet<RunKey>>()
        });
        let order = reuse_order(&cells);
        let mut pool = if args.fresh_servers {
            ServerPool::fresh()
        } else {
            ServerPool::reusing()
        };
        // Seed by seed across the whole matrix, so a matrix cut short has about as many
        // runs in every cell.
        'seeds: for k in 0..full.seeds {
            let seed = full.first_seed.wrapping_add(k);
            for (plan, file, scenario, needs) in order.iter().map(|&i| &cells[i]) {
                let needs = needs.clone();
                let key: RunKey = (plan.row.clone(), plan.column.clone(), seed);
                if mine.as_ref().is_some_and(|m| !m.contains(&key)) {
                    continue;
                }
                let finished = done.get(&key).is_some_and(|r| r.error.is_none());
                if finished && !args.redo {
                    continue;
                }
                if interrupt.is_cancelled() {
                    interrupted = true;
                    break 'seeds;
                }
                let reproduce = Reproduce {
                    scenario: file.display().to_string(),
                    seed,
                    toxiproxy: args.toxiproxy.map(|t| t.to_string()),
                    external: args.external.clone(),
                    resource: args.resource,
                    ..Reproduce::default()
                }
                .command();
                let opts = RunOptions {
                    seed: Some(seed),
                    store: args.store.clone(),
                    reproduce: reproduce.clone(),
                    toxiproxy: args.toxiproxy,
                    external: args.external.clone(),
                    resource: args.resource,
                    ..RunOptions::default()
                };
                let mut at = RunPlace {
                    row: plan.row.clone(),
                    column: plan.column.clone(),
                    seed,
                    run: None,
                    reproduce,
                    secs: 0.0,
                };
                let run_started = Instant::now();
                let summary = match run_scenario_in(scenario, &opts, interrupt.clone(), &mut pool)
                    .await
                {
                    Ok(outcome) => {
                        at.secs = run_started.elapsed().as_secs_f64();
                        write_report(&outcome.dir, &outcome.results);
                        if outcome.results.interrupted {
                            // A run cut short proves nothing; resuming runs it again.
                            interrupted = true;
                            break 'seeds;
                        }
                        at.run = relative_run(&args.store, &outcome.dir);
                        let mut summary =
                            match read_history(&outcome.dir.join(&outcome.results.history)) {
                                Ok(events) => summarize_run(at, &outcome.results, &events, needs),
                                Err(e) => failed_run(at, format!("read the history: {e}")),
                            };
                        summary.library = read_hello(&outcome.dir)
                            .map(|h| format!("{} {}", h.library, h.version));
                        summary
                    }
                    Err(e) => {
                        at.secs = run_started.elapsed().as_secs_f64();
                        failed_run(at, e.to_string())
                    }
                };
                eprintln!("{}", progress_line(&summary));
                let name = format!("{}--{}--seed{seed}.json", plan.row, plan.column);
                let json = serde_json::to_vec_pretty(&summary).expect("summaries serialize");
                lockpick_reports::write_atomic(&dir.join("runs").join(name), &json)
                    .map_err(Failure::WriteOutput)?;
                done.insert(key, summary);
                record = build_record(&full, &place, &command, &versions, &heads, &done, &explored);
                write_matrix(&record, dir, &resume_cmd).map_err(Failure::WriteOutput)?;
            }
        }
        pool.close().await;
        let Some(budget) = args.explore_safe.filter(|_| !interrupted) else {
            return Ok::<_, Failure>(());
        };
        let matrix_file = explore_safe::matrix_file_for_commands(args.file.as_ref(), dir);
        for (plan, _, scenario, _) in &cells {
            let key = (plan.row.clone(), plan.column.clone());
            if explored.contains_key(&key) && !args.redo {
                continue;
            }
            // The cells the fixed sizes found safe or could not test (and those an earlier
            // search broke).
            let safe = record.cell(&plan.row, &plan.column).is_some_and(|c| {
                matches!(
                    c.status,
                    CellStatus::Safe { .. }
                        | CellStatus::NotTested(_)
                        | CellStatus::UnsafeExplored { .. }
                )
            });
            if !safe {
                continue;
            }
            let faults = explore_safe::column_faults(scenario);
            if faults.is_empty() {
                eprintln!(
                    "lockpick: not exploring {} × {}: the column has no fault to draw",
                    plan.row, plan.column
                );
                continue;
            }
            if interrupt.is_cancelled() {
                interrupted = true;
                break;
            }
            let cell = explore_safe::Cell {
                row: plan.row.clone(),
                column: plan.column.clone(),
                base: Base::of_cell(&place.folder, &full.name, plan, true)?,
                faults,
                seed: full.first_seed,
                matrix_file: &matrix_file,
            };
            let summary = explore_safe::explore_cell(
                cell,
                budget,
                &args.store,
                args.toxiproxy,
                dir,
                interrupt.clone(),
            )
            .await;
            match summary {
                Ok(Some(summary)) => {
                    explored.insert(key, summary);
                    record =
                        build_record(&full, &place, &command, &versions, &heads, &done, &explored);
                    write_matrix(&record, dir, &resume_cmd).map_err(Failure::WriteOutput)?;
                }
                Ok(None) => {
                    interrupted = true;
                    break;
                }
                // A cell the search cannot take (say, a fault it cannot draw there) is left
                // as the runs made it, and said so.
                Err(Failure::Usage(why)) => {
                    eprintln!("lockpick: not explored: {why}");
                }
                Err(e) => return Err(e),
            }
        }
        Ok::<_, Failure>(())
    });
    drop(rt);
    outcome?;
    record = build_record(&full, &place, &command, &versions, &heads, &done, &explored);
    record.interrupted = interrupted;
    let page = write_matrix(&record, dir, &resume_cmd).map_err(Failure::WriteOutput)?;
    print_table(&record);
    outln!(
        "matrix: {} ({:.0} s)",
        page.display(),
        started.elapsed().as_secs_f64()
    );
    if let Some(md) = &args.markdown {
        let mut again = "cargo run -- matrix".to_owned();
        if let Some(f) = &args.file {
            again.push_str(&format!(" {}", f.display()));
        }
        again.push_str(&format!(
            " --seeds {} --markdown {}",
            full.seeds,
            md.display()
        ));
        lockpick_reports::write_atomic(md, matrix_markdown(&record, &again).as_bytes())
            .map_err(Failure::WriteOutput)?;
        outln!("markdown: {}", md.display());
    }
    let errors = record
        .cells
        .iter()
        .flat_map(|c| &c.runs)
        .filter(|r| r.error.is_some())
        .count();
    if interrupted {
        eprintln!("lockpick: interrupted; continue with: {resume_cmd}");
        Ok(Exit::Interrupted)
    } else if record.mismatches() > 0 {
        Ok(Exit::SuiteMismatch)
    } else if errors > 0 {
        Err(Failure::harness(format!(
            "make {errors} run(s) of the matrix (see the ERROR lines above); run them again with: {resume_cmd}"
        )))
    } else {
        Ok(Exit::Done)
    }
}

/// The order a seed's runs are made in, as indices into `cells`: row by row as the file has
/// them, and in each row first the cells whose servers a reset puts back, then those whose
/// fault leaves servers that must be restarted (a node crash), then the cells whose nodes run
/// under libfaketime (another server setup). So a row's consecutive runs share one start of
/// its servers as far as they can (`ServerPool`); the order changes no run's plan or seed.
fn reuse_order<F, N>(cells: &[(&CellPlan, F, Scenario, N)]) -> Vec<usize> {
    let mut rows: Vec<&str> = Vec::new();
    for (plan, ..) in cells {
        if !rows.contains(&plan.row.as_str()) {
            rows.push(&plan.row);
        }
    }
    let mut order: Vec<usize> = (0..cells.len()).collect();
    order.sort_by_key(|&i| {
        let (plan, _, scenario, _) = &cells[i];
        let row = rows.iter().position(|r| *r == plan.row).unwrap_or(0);
        let restarts = scenario
            .nemesis
            .faults
            .iter()
            .any(|f| matches!(f.spec.after_run(), AfterRun::Restart(_)));
        (row, scenario.has_clock_faults(), restarts)
    });
    order
}

/// The scenario a runnable cell runs, as the matrix built it, naming the cell's file it was
/// written to (which the run copies into its folder and `--seed N` reproduces).
fn cell_scenario(plan: &CellPlan, file: &Path) -> Scenario {
    let mut scenario = plan
        .built
        .clone()
        .expect("a cell the row can take has its scenario");
    scenario.path = file.to_owned();
    scenario
}

fn head(plan: &CellPlan, not_applicable: Option<String>, file: &Path, dir: &Path) -> CellHead {
    CellHead {
        row: plan.row.clone(),
        column: plan.column.clone(),
        expected: plan.expect.verdict.name().to_owned(),
        expected_why: plan.expect.why.clone(),
        note: plan.note.clone(),
        declared_not_tested: plan.not_tested.clone(),
        scenario_file: not_applicable.is_none().then(|| {
            file.strip_prefix(dir)
                .unwrap_or(file)
                .to_string_lossy()
                .into_owned()
        }),
        not_applicable,
        sizes: plan
            .resolved
            .iter()
            .map(|r| format!("{} = {} = {} ms", r.field, r.asked, r.ms))
            .collect(),
        lease_ms: plan.promise.lease_ms,
        lease_from: plan.lease_from.clone(),
    }
}

/// The finished runs recorded in `runs/`. A file that does not read is ignored (and its run
/// made again): it can only be one this build did not write.
fn read_runs(dir: &Path) -> BTreeMap<RunKey, RunSummary> {
    read_records(dir, "a run record", |r: &RunSummary| {
        (r.v == MATRIX_VERSION).then(|| (r.row.clone(), r.column.clone(), r.seed))
    })
}

/// The records of type `T` in the folder `dir`, by the key `key` gives; a file that does not
/// read as `T`, or whose version `key` refuses (`None`), is ignored with a line naming it as
/// not `what` of this version.
fn read_records<T: serde::de::DeserializeOwned, K: Ord>(
    dir: &Path,
    what: &str,
    key: impl Fn(&T) -> Option<K>,
) -> BTreeMap<K, T> {
    let mut out = BTreeMap::new();
    let Ok(read) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in read.flatten() {
        let Ok(bytes) = std::fs::read(entry.path()) else {
            continue;
        };
        let record = serde_json::from_slice::<T>(&bytes).ok();
        match record.and_then(|r| key(&r).map(|k| (k, r))) {
            Some((k, r)) => {
                out.insert(k, r);
            }
            None => eprintln!(
                "lockpick: ignoring {}: not {what} of this version",
                entry.path().display()
            ),
        }
    }
    out
}

fn build_record(
    m: &Matrix,
    place: &Place,
    command: &str,
    versions: &[(String, String)],
    heads: &BTreeMap<(String, String), CellHead>,
    done: &BTreeMap<RunKey, RunSummary>,
    explored: &BTreeMap<explore_safe::CellKey, CellExplore>,
) -> MatrixRecord {
    let mut cells = Vec::new();
    for r in &m.rows {
        for c in &m.columns {
            let head = heads[&(r.name.clone(), c.name.clone())].clone();
            let runs: Vec<RunSummary> = done
                .range(
                    (r.name.clone(), c.name.clone(), 0)
                        ..=(r.name.clone(), c.name.clone(), u64::MAX),
                )
                .filter(|(k, _)| k.2.wrapping_sub(m.first_seed) < m.seeds)
                .map(|(_, v)| v.clone())
                .collect();
            let searched = explored.get(&(r.name.clone(), c.name.clone())).cloned();
            cells.push(with_exploration(aggregate(head, runs), searched));
        }
    }
    MatrixRecord {
        v: MATRIX_VERSION,
        name: m.name.clone(),
        description: m.description.clone(),
        started: place.started.clone(),
        updated: utc_stamp(SystemTime::now()),
        lockpick_version: env!("CARGO_PKG_VERSION").to_owned(),
        server_versions: versions.to_vec(),
        command: command.to_owned(),
        file_folder: Some(place.folder.display().to_string()),
        seeds: m.seeds,
        interrupted: false,
        shard: place.shard.map(|s| s.to_string()),
        missing_shards: place.missing_shards.clone(),
        rows: m
            .rows
            .iter()
            .map(|r| RowInfo {
                name: r.name.clone(),
                lock: r.lock_name(),
                server: r.server.name().to_owned(),
                client: r.client_kind.name().to_owned(),
                fenced: r.fenced,
                ttl_ms: r.lease_ms.unwrap_or(r.ttl_ms),
                about: r.about.clone(),
                library: r.is_adapter().then(|| library_of(&r.name, done)),
                server_version: server_version_of(&r.name, done),
                discipline: Some(r.discipline().name().to_owned()),
            })
            .collect(),
        columns: m
            .columns
            .iter()
            .map(|c| ColumnInfo {
                name: c.name.clone(),
                about: c.about.clone(),
            })
            .collect(),
        cells,
    }
}

/// The library (and version) a library row's runs reported, every one if they differ.
fn library_of(row: &str, done: &BTreeMap<RunKey, RunSummary>) -> String {
    let mut seen: Vec<&str> = done
        .values()
        .filter(|r| r.row == row)
        .filter_map(|r| r.library.as_deref())
        .collect();
    seen.sort_unstable();
    seen.dedup();
    if seen.is_empty() {
        "not known before a run (its adapter names it)".to_owned()
    } else {
        seen.join(" / ")
    }
}

/// The server versions a row's runs reported (`etcd 3.6.16`), every one if they differ;
/// `None` before a run, or for a server kind that does not report one.
fn server_version_of(row: &str, done: &BTreeMap<RunKey, RunSummary>) -> Option<String> {
    let mut seen: Vec<&str> = done
        .values()
        .filter(|r| r.row == row)
        .filter_map(|r| r.server_version.as_deref())
        .collect();
    seen.sort_unstable();
    seen.dedup();
    (!seen.is_empty()).then(|| seen.join(" / "))
}

/// The command line that makes this matrix again.
fn command(args: &MatrixArgs, place: &Place) -> String {
    let mut cmd = "cargo run -- matrix".to_owned();
    if place.fresh {
        if let Some(f) = &args.file {
            cmd.push_str(&format!(" {}", f.display()));
        }
    } else {
        cmd.push_str(&format!(" --resume {}", place.dir.display()));
        if let Some(f) = &args.file {
            cmd.push_str(&format!(" {}", f.display()));
        }
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
    if let (true, Some(shard)) = (place.fresh, place.shard) {
        cmd.push_str(&format!(" --shard {shard}"));
    }
    cmd.push_str(&crate::reproduce::server_flags(
        args.toxiproxy,
        &args.external,
        args.resource,
    ));
    if let Some(budget) = args.explore_safe {
        cmd.push_str(&format!(" --explore-safe {}s", budget.as_secs()));
    }
    if let Some(md) = &args.markdown {
        cmd.push_str(&format!(" --markdown {}", md.display()));
    }
    if args.store != Path::new("store") {
        cmd.push_str(&format!(" --store {}", args.store.display()));
    }
    cmd
}

fn progress_line(r: &RunSummary) -> String {
    let what = match (&r.verdict, &r.error, &r.not_tested) {
        (_, Some(e), _) => format!("ERROR: failed to {e}"),
        (Some(v), None, Some(why)) if v == "valid" || v == "not-tested" => {
            format!("not tested: {why}")
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
        if let CellStatus::NotTested(why) = &c.status {
            outln!("not tested {} × {}: {why}", c.row, c.column);
        }
    }
}
