//! `lockpick bench`: what each lock of a matrix file costs. Every row runs its baseline (no
//! fault) with no hold and no think time at each client count, so the figures are how fast the
//! lock hands over, not how fast the workload is paced: grants per second, acquire latency
//! p50/p99, and the CPU its servers spent per grant (polling clients against watch-based ones).

use crate::cli::BenchArgs;
use crate::outcome::{Exit, Failure, Outcome};
use crate::reproduce::Reproduce;
use crate::run_args::{run_size_args, runtime};
use lockpick_harness::client::process::read_hello;
use lockpick_harness::matrix::{folder_of, load_matrix_in, plan_matrix, CellPlan};
use lockpick_harness::run::{relative_run, run_scenario, utc_stamp, RunOptions};
use lockpick_harness::scenario::load_scenario;
use lockpick_reports::bench::{
    bench_markdown, write_bench, BenchPoint, BenchRecord, BENCH_DIR, BENCH_VERSION,
};
use lockpick_reports::{acquire_outcomes, quantile, ReportError};
use lockpick_store::RunState;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The most contending clients one run may have (as `--clients` allows).
const MAX_CLIENTS: usize = 1000;

pub(super) fn bench(args: BenchArgs) -> Outcome {
    if let Some(&bad) = args.clients.iter().find(|&&n| n == 0 || n > MAX_CLIENTS) {
        return Err(Failure::Usage(format!(
            "read --clients: {bad} is out of range; allowed: 1 to {MAX_CLIENTS}, comma-separated"
        )));
    }
    let (_, duration_ms) = run_size_args(None, Some(args.duration))?;
    let duration_ms = duration_ms.expect("a duration was given");
    let m = load_matrix_in(&args.file, &folder_of(&args.file))?;
    let known: Vec<&str> = m.rows.iter().map(|r| r.name.as_str()).collect();
    if let Some(bad) = args.rows.iter().find(|r| !known.contains(&r.as_str())) {
        return Err(Failure::Usage(format!(
            "read --rows: {} has no row {bad:?}; allowed: {}",
            args.file.display(),
            known.join(", ")
        )));
    }
    let Some(baseline) = m.columns.iter().find(|c| c.fault.is_none()) else {
        return Err(Failure::Usage(format!(
            "read {}: it has no column without a fault (`fault = \"none\"`), which bench runs",
            args.file.display()
        )));
    };
    let plans = plan_matrix(&m)?;
    let rows: Vec<&CellPlan> = plans
        .iter()
        .filter(|p| p.column == baseline.name)
        .filter(|p| args.rows.is_empty() || args.rows.contains(&p.row))
        .collect();

    let started = utc_stamp(SystemTime::now());
    let dir = args.store.join(BENCH_DIR).join(&started);
    let scenarios = dir.join("scenarios");
    std::fs::create_dir_all(&scenarios).map_err(|source| Failure::CreateDir {
        path: scenarios.clone(),
        source,
    })?;
    let command = command(&args);
    outln!(
        "bench: {} locks × clients {:?}, {} ms each, seed {} -> {}",
        rows.len(),
        args.clients,
        duration_ms,
        args.seed,
        dir.display()
    );

    let rt = runtime();
    let mut interrupted = false;
    let points = rt.block_on(async {
        let interrupt = crate::signals::install()?;
        let mut points = Vec::new();
        'rows: for plan in &rows {
            let file = scenarios.join(format!("{}.toml", plan.row));
            let scenario = match bench_text(plan, &args.file) {
                Ok(text) => {
                    std::fs::write(&file, text).map_err(write_failure(&file))?;
                    load_scenario(&file.display().to_string())?
                }
                Err(why) => {
                    for &clients in &args.clients {
                        points.push(failed(plan, clients, why.clone()));
                    }
                    continue;
                }
            };
            for &clients in &args.clients {
                if interrupt.is_cancelled() {
                    interrupted = true;
                    break 'rows;
                }
                let reproduce = Reproduce {
                    scenario: file.display().to_string(),
                    seed: args.seed,
                    clients: Some(clients),
                    time_limit: Some(duration_ms as f64 / 1000.0),
                    store: Some(args.store.clone()),
                    ..Reproduce::default()
                }
                .command();
                let opts = RunOptions {
                    seed: Some(args.seed),
                    clients: Some(clients),
                    duration_ms: Some(duration_ms),
                    store: args.store.clone(),
                    reproduce: reproduce.clone(),
                    ..RunOptions::default()
                };
                let point = match run_scenario(&scenario, &opts, interrupt.clone()).await {
                    Ok(outcome) if outcome.results.interrupted => {
                        interrupted = true;
                        break 'rows;
                    }
                    Ok(outcome) => {
                        measured(plan, clients, &args.store, &outcome.dir, &outcome.results)
                    }
                    Err(e) => failed(plan, clients, format!("{e} (repeat: {reproduce})")),
                };
                outln!("  {}", progress_line(&point));
                points.push(point);
            }
        }
        Ok::<_, Failure>(points)
    })?;

    let record = BenchRecord {
        v: BENCH_VERSION,
        started,
        lockpick_version: lockpick_harness::LOCKPICK_BUILD.to_owned(),
        matrix: args.file.display().to_string(),
        seed: args.seed,
        duration_ms,
        clients: args.clients.clone(),
        machine: machine(),
        points,
        command,
    };
    write_bench(&dir, &record).map_err(Failure::WriteOutput)?;
    outln!("bench: {}", dir.join("bench.md").display());
    if let Some(md) = &args.markdown {
        publish(md, &dir, &record)?;
        outln!("bench: {}", md.display());
    }
    Ok(if interrupted {
        Exit::Interrupted
    } else {
        Exit::Done
    })
}

/// The row's baseline cell as a scenario file for the benchmark: its lock and its lease as
/// the matrix gives them, no fault, no hold and no think time. Written whole (not patched in
/// memory) so the run stores exactly what ran and `lockpick scenario FILE` repeats it.
fn bench_text(plan: &CellPlan, matrix: &Path) -> Result<String, String> {
    if let Some(why) = &plan.not_applicable {
        return Err(format!("the row cannot run its baseline: {why}"));
    }
    let mut table: toml::Table = plan
        .text
        .parse()
        .map_err(|e| format!("the cell's scenario does not parse: {e}"))?;
    table.insert("name".into(), format!("bench-{}", plan.row).into());
    table.remove("expected");
    table.remove("nemesis");
    let workload = table
        .entry("workload")
        .or_insert_with(|| toml::Table::new().into())
        .as_table_mut()
        .ok_or("the cell's [workload] is not a table")?;
    for key in ["hold_ms", "think_ms"] {
        workload.insert(key.into(), toml::Value::Array(vec![0.into(), 0.into()]));
    }
    let body = toml::to_string(&table).map_err(|e| e.to_string())?;
    Ok(format!(
        "# lockpick bench: row {:?} of {} with no fault, no hold and no think time.\n{body}",
        plan.row,
        matrix.display()
    ))
}

/// The figures of one finished run.
fn measured(
    plan: &CellPlan,
    clients: usize,
    store: &Path,
    dir: &Path,
    results: &lockpick_checker::results::RunResults,
) -> BenchPoint {
    let mut point = blank(plan, clients);
    point.run = relative_run(store, dir).unwrap_or_else(|| dir.display().to_string());
    point.verdict = results.verdict.name().to_owned();
    point.workload_ms = results.workload_ms;
    point.library = read_hello(dir).map(|h| format!("{} {}", h.library, h.version));
    match acquire_outcomes(&dir.join(&results.history)) {
        Ok(acquires) => {
            point.grants = acquires.ok_ms.len() as u64;
            point.failed = acquires.failed;
            point.unknown = acquires.unknown;
            if !acquires.ok_ms.is_empty() {
                point.acquire_p50_ms = Some(quantile(&acquires.ok_ms, 0.5));
                point.acquire_p99_ms = Some(quantile(&acquires.ok_ms, 0.99));
            }
        }
        Err(e) => point.error = Some(format!("read the history: {e}")),
    }
    point.server_cpu_ms = RunState::read(dir)
        .ok()
        .flatten()
        .and_then(|s| s.server_cpu_ms)
        .map(|nodes| nodes.values().sum());
    point
}

/// A point without figures, saying why.
fn failed(plan: &CellPlan, clients: usize, error: String) -> BenchPoint {
    BenchPoint {
        error: Some(error),
        ..blank(plan, clients)
    }
}

/// A point of the row and client count with no figures yet.
fn blank(plan: &CellPlan, clients: usize) -> BenchPoint {
    BenchPoint {
        row: plan.row.clone(),
        lock: plan.scenario.clone(),
        library: None,
        clients,
        workload_ms: 0,
        grants: 0,
        failed: 0,
        unknown: 0,
        acquire_p50_ms: None,
        acquire_p99_ms: None,
        server_cpu_ms: None,
        verdict: "none".to_owned(),
        run: String::new(),
        error: None,
    }
}

fn progress_line(p: &BenchPoint) -> String {
    match &p.error {
        Some(e) => format!("{} × {}: error: {e}", p.row, p.clients),
        None => format!(
            "{} × {}: {:.0} grants/s, acquire p50 {:.2} ms p99 {:.2} ms, server CPU {} ({})",
            p.row,
            p.clients,
            p.grants_per_sec(),
            p.acquire_p50_ms.unwrap_or(f64::NAN),
            p.acquire_p99_ms.unwrap_or(f64::NAN),
            p.cpu_ms_per_grant()
                .map_or("not measured".to_owned(), |c| format!(
                    "{c:.3} ms per grant"
                )),
            p.verdict
        ),
    }
}

/// Writes the markdown to `md` with its charts beside it (`<stem>-handoff.svg`, …).
fn publish(md: &Path, dir: &Path, record: &BenchRecord) -> Result<(), Failure> {
    let folder = md.parent().map(Path::to_path_buf).unwrap_or_default();
    let stem = md
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "bench".to_owned());
    let prefix = format!("{stem}-");
    for chart in ["handoff.svg", "latency.svg"] {
        let to: PathBuf = folder.join(format!("{prefix}{chart}"));
        std::fs::copy(dir.join(chart), &to).map_err(write_failure(&to))?;
    }
    let text = bench_markdown(record, &prefix);
    std::fs::write(md, text).map_err(write_failure(md))
}

/// A file bench writes (a scenario, the markdown, a chart) that could not be written.
fn write_failure(path: &Path) -> impl FnOnce(std::io::Error) -> Failure + '_ {
    move |source| {
        Failure::WriteOutput(ReportError::Write {
            path: path.to_owned(),
            source,
        })
    }
}

/// What the figures were measured on.
fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cores} cores")
}

/// The command line that repeats this benchmark.
fn command(args: &BenchArgs) -> String {
    let mut cmd = format!(
        "{} bench {}",
        crate::reproduce::program(),
        args.file.display()
    );
    if !args.rows.is_empty() {
        cmd.push_str(&format!(" --rows {}", args.rows.join(",")));
    }
    let clients: Vec<String> = args.clients.iter().map(|c| c.to_string()).collect();
    cmd.push_str(&format!(
        " --clients {} --duration {} --seed {}",
        clients.join(","),
        args.duration,
        args.seed
    ));
    cmd.push_str(&crate::reproduce::store_flag(&args.store));
    cmd
}
