//! What each subcommand does, and which exit code it ends with.

use crate::cli::{CheckArgs, Cli, Command, ScenarioArgs};
use crate::exit_code;
use crate::printable::printable;
use anyhow::Context;
use lockpick_checker::history::{read_history, Event};
use lockpick_checker::import::to_jepsen_edn;
use lockpick_checker::lin::{check_file, Budget};
use lockpick_checker::lock::{LockCheckParams, Property};
use lockpick_checker::models::ModelName;
use lockpick_checker::results::{RunResults, RESULTS_VERSION};
use lockpick_checker::run_checks::{check_run_file, FileChecks, RunChecks};
use lockpick_checker::verdict::Verdict;
use lockpick_harness::locks::{find_lock, lock_names, LockPreset};
use lockpick_harness::run::{run_scenario, RunOptions};
use lockpick_harness::scenario::{
    check_overrides, list_scenarios, load_scenario, parse_scenario, rules, Scenario,
};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// Runs the command and returns the process exit code.
pub fn dispatch(cli: Cli) -> u8 {
    match cli.command {
        Command::Scenario(args) => scenario(args),
        Command::List => list(),
        Command::Suite(args) => crate::suite::suite(args),
        Command::Check(args) => match args.model {
            Some(model) => check_model(&args, model),
            None => check(args),
        },
        Command::Export(args) => export(&args.history),
        Command::Report { run_dir } => report(&run_dir),
        Command::Compare(args) => crate::compare::compare(args),
        Command::Matrix(args) => crate::matrix::matrix(args),
        Command::Serve(args) => crate::serve::serve(args),
        Command::Gc { store } => crate::gc::gc(&store),
        Command::Toxiproxy { listen } => toxiproxy(listen),
    }
}

pub(crate) fn verdict_code(v: Verdict) -> u8 {
    match v {
        Verdict::Valid => exit_code::VALID,
        Verdict::Invalid => exit_code::INVALID,
        Verdict::Unknown => exit_code::UNKNOWN,
    }
}

pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime starts")
}

/// The command line that repeats a run.
fn reproduce(args: &ScenarioArgs, seed: u64) -> String {
    crate::reproduce::Reproduce {
        scenario: args.scenario.clone(),
        seed,
        time_limit: args.time_limit,
        clients: args.clients,
        toxiproxy: args.toxiproxy.map(|t| t.to_string()),
        backend: args.backend.clone(),
        external: args.external.clone(),
        resource: args.resource,
    }
    .command()
}

/// Reads `--clients` and `--time-limit` for `scenario`: within the ranges `--help` gives, and
/// fitting its faults (a fault aimed at client 3 needs 4 clients; a longer run must keep the
/// fault schedule within its bound). Returns the clients and the time limit in milliseconds.
pub(crate) fn run_size_args(
    scenario: &Scenario,
    clients: Option<usize>,
    time_limit: Option<f64>,
) -> Result<(Option<usize>, Option<u64>), String> {
    if clients == Some(0) {
        return Err("read --clients: 0 clients would test nothing; allowed: 1 to 1000".to_owned());
    }
    let max_secs = (rules::MAX_RUN_MS / 1000) as f64;
    let duration_ms = match time_limit {
        Some(t) if !(t > 0.0 && t <= max_secs) => {
            return Err(format!(
                "read --time-limit: {t:?} is out of range; allowed: 0.001 to {max_secs} seconds"
            ))
        }
        Some(t) => Some(((t * 1000.0).round() as u64).max(1)),
        None => None,
    };
    check_overrides(scenario, clients, duration_ms)?;
    Ok((clients, duration_ms))
}

/// Reads `--backend`: a named lock (server kind + client kind).
pub(crate) fn backend_arg(name: &str) -> Result<&'static LockPreset, String> {
    find_lock(name).ok_or_else(|| {
        format!(
            "read --backend: unknown lock {name:?}; allowed: {}",
            lock_names().join(", ")
        )
    })
}

/// Writes the run's `report.html` and says where; a report that cannot be written is a
/// warning, not a reason to change the run's exit code.
pub(crate) fn write_report(dir: &Path, results: &RunResults, events: Option<&[Event]>) {
    let read;
    let events = match events {
        Some(e) => e,
        None => match read_history(&dir.join(&results.history)) {
            Ok(e) => {
                read = e;
                &read
            }
            Err(e) => {
                eprintln!("lockpick: failed to write the report: {e}");
                return;
            }
        },
    };
    match lockpick_reports::write_run_report(dir, results, events) {
        Ok(path) => println!("  report: {}", path.display()),
        Err(e) => eprintln!("lockpick: failed to {e}"),
    }
}

fn scenario(args: ScenarioArgs) -> u8 {
    let scenario = match load_scenario(&args.scenario) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("lockpick: failed to {e}");
            return exit_code::USAGE;
        }
    };
    let parsed = run_size_args(&scenario, args.clients, args.time_limit).and_then(|size| {
        let backend = args.backend.as_deref().map(backend_arg).transpose()?;
        if !args.external.is_empty() {
            let moved = backend.map(|b| scenario.with_lock(b).0);
            moved
                .as_ref()
                .unwrap_or(&scenario)
                .check_external(&args.external)?;
        }
        Ok((size.1, backend))
    });
    let (duration_ms, backend) = match parsed {
        Ok(p) => p,
        Err(e) => {
            eprintln!("lockpick: failed to {e}");
            return exit_code::USAGE;
        }
    };
    let seed = args.seed.unwrap_or(scenario.seed);
    let command = reproduce(&args, seed);
    eprintln!("lockpick: scenario {} with seed {seed}", scenario.name);
    let opts = RunOptions {
        seed: Some(seed),
        duration_ms,
        clients: args.clients,
        toxiproxy: args.toxiproxy,
        store: args.store.clone(),
        progress: std::io::stderr().is_terminal(),
        reproduce: command.clone(),
        backend,
        keep_data: args.keep_data,
        external: args.external.clone(),
        resource: args.resource,
    };
    let rt = runtime();
    let outcome = rt.block_on(async {
        let interrupt = crate::signals::install().context("install signal handlers")?;
        run_scenario(&scenario, &opts, interrupt)
            .await
            .map_err(anyhow::Error::from)
    });
    drop(rt);
    match outcome {
        Ok(outcome) => {
            print!(
                "{}",
                printable(&lockpick_reports::text_summary(
                    &outcome.results,
                    &outcome.dir
                ))
            );
            // What the scenario claims, e.g. that Redlock grants no fencing token.
            if !scenario.description.is_empty() {
                println!("  scenario: {}", scenario.description);
            }
            write_report(&outcome.dir, &outcome.results, None);
            if outcome.results.interrupted {
                exit_code::INTERRUPTED
            } else {
                verdict_code(outcome.results.verdict)
            }
        }
        Err(e) => {
            // A server's log tail may be in the message.
            eprintln!("lockpick: failed to {}", printable(&format!("{e:#}")));
            eprintln!("  reproduce: {command}");
            exit_code::HARNESS
        }
    }
}

fn list() -> u8 {
    let entries = list_scenarios();
    if entries.is_empty() {
        eprintln!("lockpick: no scenarios found in ./scenarios");
        return exit_code::USAGE;
    }
    let mut code = exit_code::VALID;
    for entry in entries {
        let parsed = std::fs::read_to_string(&entry.path)
            .map_err(|e| e.to_string())
            .and_then(|t| parse_scenario(&entry.path, &t).map_err(|e| e.to_string()));
        match parsed {
            Ok(s) => println!(
                "{:<28} {:<16} expected {:<8} {}",
                printable(&entry.name),
                s.lock_name(),
                s.expected.map(|v| v.name()).unwrap_or("-"),
                s.description
            ),
            Err(e) => {
                println!("{:<28} BROKEN: {e}", printable(&entry.name));
                code = exit_code::USAGE;
            }
        }
    }
    code
}

fn check(args: CheckArgs) -> u8 {
    let (history, run_dir) = if args.history.is_dir() {
        (
            args.history.join("history.jsonl"),
            Some(args.history.clone()),
        )
    } else {
        (
            args.history.clone(),
            args.history.parent().map(PathBuf::from),
        )
    };
    let stored = match stored_scenario(run_dir.as_deref(), &args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("lockpick: failed to {e}");
            return exit_code::USAGE;
        }
    };
    let property = match args.property.as_deref() {
        Some("exclusive") => Property::Exclusive,
        Some("fenced") => Property::Fenced,
        Some(other) => {
            eprintln!(
                "lockpick: failed to read --property: unknown value {other:?}; allowed: exclusive, fenced"
            );
            return exit_code::USAGE;
        }
        None => stored.as_ref().map_or(Property::Exclusive, |s| s.property),
    };
    let deadlock_ms = args
        .deadlock_ms
        .or(stored.as_ref().map(|s| s.deadlock_ms))
        .unwrap_or(3000);
    // One pass over the file: memory follows the operations in flight, not the history.
    let params = LockCheckParams {
        property,
        deadlock_ms,
    };
    // A run that did not end with a check says so first (from its run.json).
    if let Some(dir) = run_dir
        .as_ref()
        .filter(|d| d.join("history.jsonl") == history)
    {
        match crate::incomplete::incomplete_run(dir) {
            Ok(None) => {}
            Ok(Some(run)) => return crate::incomplete::check_incomplete(dir, &run, &params),
            Err(code) => return code,
        }
    }
    let found = match check_run_file(&history, &params) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("lockpick: failed to {e}");
            return exit_code::USAGE;
        }
    };
    let checks = found.checks.clone();
    println!("{}: {} events", history.display(), found.events);
    if let Some(torn) = found.torn {
        println!("  note: {}: {torn}", history.display());
    }
    print!("{}", printable(&checks.lock.to_string()));
    if let Some(lin) = &checks.linearizability {
        print!("{}", printable(&lockpick_reports::lin_text(lin)));
    }
    let verdict = checks.verdict();
    if let Some(dir) = run_dir.filter(|d| d.join("history.jsonl") == history) {
        let results = checked_results(&dir, stored.as_ref(), &found, checks);
        // The report reads the history again, whole: its charts need every operation.
        write_report(&dir, &results, None);
    }
    verdict_code(verdict)
}

/// The run's own scenario copy, which says what was promised (the property, the deadlock
/// threshold). One that is there but cannot be read is an error, never a silent fallback to
/// `exclusive` (which would flip a valid fenced run to invalid), unless the options it would
/// give are all on the command line.
fn stored_scenario(run_dir: Option<&Path>, args: &CheckArgs) -> Result<Option<Scenario>, String> {
    let Some(path) = run_dir.map(|d| d.join("scenario.toml")) else {
        return Ok(None);
    };
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(None);
    }
    let parsed = std::fs::read_to_string(&path)
        .map_err(|e| format!("read {}: {e}", path.display()))
        .and_then(|text| parse_scenario(&path, &text).map_err(|e| e.to_string()));
    match parsed {
        Ok(s) => Ok(Some(s)),
        Err(e) if args.property.is_some() && args.deadlock_ms.is_some() => {
            eprintln!("lockpick: note: the run's scenario.toml is not used ({e}); checking with the given --property and --deadlock-ms");
            Ok(None)
        }
        Err(e) => Err(format!(
            "{e}\n  the run's scenario.toml tells which property and deadlock threshold to check; fix it, or give both --property and --deadlock-ms"
        )),
    }
}

/// `check --model`: linearizability of any supported history file.
fn check_model(args: &CheckArgs, model: ModelName) -> u8 {
    let path = if args.history.is_dir() {
        args.history.join("history.jsonl")
    } else {
        args.history.clone()
    };
    let budget = Budget {
        time: Some(std::time::Duration::from_secs_f64(args.budget)),
        ..Budget::default()
    };
    match check_file(&path, model, args.format, &budget) {
        Ok(report) => {
            println!("{}", path.display());
            print!("{}", printable(&report.to_string()));
            verdict_code(report.verdict)
        }
        Err(e) => {
            let e = e.to_string();
            eprintln!(
                "lockpick: failed to check {}: {}",
                path.display(),
                printable(&e)
            );
            exit_code::USAGE
        }
    }
}

/// `export`: a lockpick history as Jepsen EDN.
fn export(history: &Path) -> u8 {
    let path = if history.is_dir() {
        history.join("history.jsonl")
    } else {
        history.to_owned()
    };
    match read_history(&path) {
        Ok(events) => {
            print!("{}", to_jepsen_edn(&events));
            exit_code::VALID
        }
        Err(e) => {
            eprintln!("lockpick: failed to {e}");
            exit_code::USAGE
        }
    }
}

/// The results of a re-check: the stored run's facts with the new lock report, or, for a
/// history without results, what the history and the stored scenario tell.
fn checked_results(
    dir: &Path,
    stored: Option<&Scenario>,
    found: &FileChecks,
    checks: RunChecks,
) -> RunResults {
    let verdict = checks.verdict();
    let (lock, linearizability) = (checks.lock, checks.linearizability);
    match lockpick_reports::read_results(dir) {
        Ok(mut r) => {
            r.verdict = verdict;
            r.lock = lock;
            r.linearizability = linearizability;
            r
        }
        Err(_) => {
            let end_ms = found.end_ns / 1_000_000;
            let ops = found.completions;
            RunResults {
                v: RESULTS_VERSION,
                scenario: stored.map_or_else(|| "unknown".to_owned(), |s| s.name.clone()),
                backend: stored.map_or_else(|| "unknown".to_owned(), |s| s.lock_name()),
                seed: stored.map_or(0, |s| s.seed),
                verdict,
                expected: stored.and_then(|s| s.expected),
                interrupted: false,
                workload_ms: end_ms,
                ops,
                history: "history.jsonl".to_owned(),
                reproduce: format!("cargo run -- check {}", dir.display()),
                lock,
                linearizability,
            }
        }
    }
}

fn report(dir: &Path) -> u8 {
    match crate::incomplete::incomplete_run(dir) {
        Ok(None) => {}
        Ok(Some(run)) => {
            println!("{}: {}", dir.display(), run.sentence);
            println!(
                "  no results to report; `lockpick check {}` checks what was recorded",
                dir.display()
            );
            return exit_code::INCOMPLETE_RUN;
        }
        Err(code) => return code,
    }
    match lockpick_reports::report_run_dir(dir) {
        Ok(path) => {
            println!("{}", path.display());
            exit_code::VALID
        }
        Err(e) => {
            eprintln!("lockpick: failed to {e}");
            exit_code::USAGE
        }
    }
}

fn toxiproxy(listen: std::net::SocketAddr) -> u8 {
    let rt = runtime();
    match rt.block_on(lockpick_harness::proxy::serve_standalone(listen)) {
        Ok(()) => exit_code::VALID,
        Err(e) => {
            eprintln!("lockpick: failed to {e}");
            exit_code::HARNESS
        }
    }
}
