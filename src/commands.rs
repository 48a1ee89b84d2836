//! What each subcommand does, and which exit code it ends with.

use crate::cli::{CheckArgs, Cli, Command, ScenarioArgs};
use crate::exit_code;
use anyhow::Context;
use lockpick_checker::history::read_history;
use lockpick_checker::lock::{check_locks, LockCheckParams, Property};
use lockpick_checker::verdict::Verdict;
use lockpick_harness::run::{run_scenario, RunOptions};
use lockpick_harness::scenario::{list_scenarios, load_scenario, parse_scenario};
use std::io::IsTerminal;
use std::path::PathBuf;

/// Runs the command and returns the process exit code.
pub fn dispatch(cli: Cli) -> u8 {
    match cli.command {
        Command::Scenario(args) => scenario(args),
        Command::List => list(),
        Command::Suite(args) => crate::suite::suite(args),
        Command::Check(args) => check(args),
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
    let mut cmd = format!("cargo run -- scenario {} --seed {seed}", args.scenario);
    if let Some(t) = args.time_limit {
        cmd.push_str(&format!(" --time-limit {t}"));
    }
    if let Some(c) = args.clients {
        cmd.push_str(&format!(" --clients {c}"));
    }
    if let Some(t) = args.toxiproxy {
        cmd.push_str(&format!(" --toxiproxy {t}"));
    }
    cmd
}

fn scenario(args: ScenarioArgs) -> u8 {
    let scenario = match load_scenario(&args.scenario) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("lockpick: failed to {e}");
            return exit_code::USAGE;
        }
    };
    if args.clients == Some(0) {
        eprintln!(
            "lockpick: failed to read --clients: 0 clients would test nothing; use 1 or more"
        );
        return exit_code::USAGE;
    }
    let duration_ms = match args.time_limit {
        Some(t) if !(t > 0.0 && t.is_finite()) => {
            eprintln!(
                "lockpick: failed to read --time-limit: {t} is not a positive number of seconds"
            );
            return exit_code::USAGE;
        }
        Some(t) => Some((t * 1000.0).round() as u64),
        None => None,
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
                lockpick_reports::text_summary(&outcome.results, &outcome.dir)
            );
            // What the scenario claims, e.g. that Redlock grants no fencing token.
            if !scenario.description.is_empty() {
                println!("  scenario: {}", scenario.description);
            }
            if outcome.results.interrupted {
                exit_code::INTERRUPTED
            } else {
                verdict_code(outcome.results.verdict)
            }
        }
        Err(e) => {
            eprintln!("lockpick: failed to {e:#}");
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
                "{:<28} {:<12} expected {:<8} {}",
                entry.name,
                s.backend.name(),
                s.expected.map(|v| v.name()).unwrap_or("-"),
                s.description
            ),
            Err(e) => {
                println!("{:<28} BROKEN: {e}", entry.name);
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
    let events = match read_history(&history) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("lockpick: failed to {e}");
            return exit_code::USAGE;
        }
    };
    // The run's own scenario copy says what was promised, unless the user overrides it.
    let stored = run_dir
        .map(|d| d.join("scenario.toml"))
        .filter(|p| p.is_file())
        .and_then(|p| {
            let text = std::fs::read_to_string(&p).ok()?;
            parse_scenario(&p, &text).ok()
        });
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
    let report = check_locks(
        &events,
        &LockCheckParams {
            property,
            deadlock_ms,
        },
    );
    println!("{}: {} events", history.display(), events.len());
    print!("{report}");
    verdict_code(report.verdict)
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
