//! `lockpick check`: check a stored history again, offline, with the lock checks (and write
//! the run's report), or with `--model`, any supported history for linearizability.

use super::incomplete::{check_incomplete, incomplete_run};
use crate::cli::CheckArgs;
use crate::failure::StoredScenarioError;
use crate::outcome::{Exit, Failure, Outcome};
use crate::printable::printable;
use crate::run_args::write_report;
use lockpick_checker::lin_search::Budget;
use lockpick_checker::linearizability::check_file;
use lockpick_checker::lock::{LockCheckParams, Property};
use lockpick_checker::models::Model;
use lockpick_checker::results::{RunResults, RESULTS_VERSION};
use lockpick_checker::run_checks::{check_run_file_with_server, FileChecks, RunChecks};
use lockpick_checker::server_record::read_server_record_in;
use lockpick_checker::verdict::Verdict;
use lockpick_harness::scenario::{parse_scenario, Scenario};
use std::path::{Path, PathBuf};

pub(super) fn check(args: CheckArgs) -> Outcome {
    match args.model {
        Some(model) => check_model(&args, model.0),
        None => check_locks(args),
    }
}

fn check_locks(args: CheckArgs) -> Outcome {
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
    let stored = stored_scenario(run_dir.as_deref(), &args)?;
    let property = args
        .property
        .map(|p| p.0)
        .or(stored.as_ref().map(|s| s.property))
        .unwrap_or(Property::Exclusive);
    let deadlock_ms = args
        .deadlock_ms
        .or(stored.as_ref().map(|s| s.deadlock_ms))
        .unwrap_or(3000);
    // One pass over the file: memory follows the operations in flight, not the history.
    let params = LockCheckParams {
        property,
        deadlock_ms,
    };
    // The run folder whose history this is, if it is one.
    let run_dir = run_dir.filter(|d| d.join("history.jsonl") == history);
    // A run that did not end with a check says so first (from its run.json).
    if let Some(dir) = &run_dir {
        if let Some(run) = incomplete_run(dir)? {
            let (exit, found) = check_incomplete(dir, &run, &params);
            // What was recorded gets its report too, as every run folder `check` reads does:
            // the timeline up to a broken adapter or a failed server is the evidence a user
            // needs. It is marked partial (`interrupted`), and the exit code still says 6.
            if let Some(found) = found {
                let mut results =
                    checked_results(dir, stored.as_ref(), &found, found.checks.clone());
                results.interrupted = true;
                write_report(dir, &results);
            }
            return Ok(exit);
        }
    }
    // A run's own scenario says what its faults are judged by: a re-check says "not exposed"
    // where the run did.
    let plan = match (&stored, &run_dir) {
        (Some(scenario), Some(_)) => Some(scenario.exposure_plan()),
        _ => None,
    };
    // The server's own record of the locks, when the run folder has one (`server.jsonl`), is
    // set beside the holders' beliefs; a run without one is checked as it always was.
    let server = match &run_dir {
        Some(dir) => read_server_record_in(dir)?,
        None => None,
    };
    let server_torn = server.as_ref().and_then(|s| s.torn);
    let found = check_run_file_with_server(&history, &params, plan, server.map(|s| s.events))?;
    let checks = found.checks.clone();
    outln!("{}: {} events", history.display(), found.events);
    if let Some(torn) = found.torn {
        outln!("  note: {}: {torn}", history.display());
    }
    if let (Some(torn), Some(dir)) = (server_torn, &run_dir) {
        let path = dir.join(lockpick_checker::server_record::SERVER_RECORD_FILE);
        outln!("  note: {}: {torn}", path.display());
    }
    out!("{}", printable(&checks.lock.to_string()));
    if let Some(lin) = &checks.linearizability {
        out!("{}", printable(&lockpick_reports::lin_text(lin)));
        if let Some(note) = lockpick_reports::lin_note(checks.lock.property, lin) {
            outln!("  {note}");
        }
    }
    let verdict = checks.verdict();
    if let Some(exposures) = &checks.exposure {
        out!("{}", printable(&lockpick_reports::exposure_text(exposures)));
    }
    if let (Verdict::NotExposed, Some(why)) = (verdict, checks.not_exposed()) {
        outln!("NOT EXPOSED: {}", printable(&why));
    }
    if let Some(dir) = run_dir {
        let results = checked_results(&dir, stored.as_ref(), &found, checks);
        // The report is a second streaming pass over the file: its charts follow every operation.
        write_report(&dir, &results);
    }
    Ok(Exit::Verdict(verdict))
}

/// The run's own scenario copy, which says what was promised (the property, the deadlock
/// threshold). One that is there but cannot be read is an error, never a silent fallback to
/// `exclusive` (which would flip a valid fenced run to invalid), unless the options it would
/// give are all on the command line.
fn stored_scenario(run_dir: Option<&Path>, args: &CheckArgs) -> Result<Option<Scenario>, Failure> {
    let Some(path) = run_dir.map(|d| d.join("scenario.toml")) else {
        return Ok(None);
    };
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(None);
    }
    let parsed = std::fs::read_to_string(&path)
        .map_err(|source| StoredScenarioError::Read {
            path: path.clone(),
            source,
        })
        .and_then(|text| Ok(parse_scenario(&path, &text)?));
    match parsed {
        Ok(s) => Ok(Some(s)),
        Err(e) if args.property.is_some() && args.deadlock_ms.is_some() => {
            eprintln!("lockpick: note: the run's scenario.toml is not used ({e}); checking with the given --property and --deadlock-ms");
            Ok(None)
        }
        Err(e) => Err(Failure::RunScenario(e)),
    }
}

/// `check --model`: linearizability of any supported history file.
fn check_model(args: &CheckArgs, model: &dyn Model) -> Outcome {
    let path = if args.history.is_dir() {
        args.history.join("history.jsonl")
    } else {
        args.history.clone()
    };
    let budget = Budget {
        time: Some(std::time::Duration::from_secs_f64(args.budget)),
        ..Budget::default()
    };
    let report = check_file(&path, model, args.format.map(|f| f.0), &budget).map_err(|source| {
        Failure::CheckModel {
            path: path.clone(),
            source: Box::new(source),
        }
    })?;
    outln!("{}", path.display());
    out!("{}", printable(&report.to_string()));
    Ok(Exit::Verdict(report.verdict))
}

/// The results of a re-check: the stored run's facts with the new lock report, or, for a
/// history without results, what the history and the stored scenario tell.
fn checked_results(
    dir: &Path,
    stored: Option<&Scenario>,
    found: &FileChecks,
    checks: RunChecks,
) -> RunResults {
    match lockpick_reports::read_results(dir) {
        Ok(r) => checks.into_results(r),
        Err(_) => {
            let verdict = checks.verdict();
            let not_exposed = checks.not_exposed();
            let exposed_by = checks.exposed_by();
            let exposures = checks.exposure.clone();
            let (lock, linearizability) = (checks.lock, checks.linearizability);
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
                reproduce: format!("{} check {}", crate::reproduce::program(), dir.display()),
                lock,
                linearizability,
                not_exposed,
                exposed_by,
                exposures,
                // What the stored scenario asked for; what ran was not recorded.
                server: stored.map(|s| lockpick_checker::results::ServerRan {
                    kind: s.server.name().to_owned(),
                    release: s.version.map(|v| v.name.to_owned()),
                    version: None,
                    instance: None,
                }),
                discipline: stored.map(|s| s.client.discipline.name().to_owned()),
                library: lockpick_harness::client::process::read_hello(dir)
                    .map(|h| format!("{} {}", h.library, h.version)),
                description: stored
                    .filter(|s| !s.description.is_empty())
                    .map(|s| s.description.clone()),
            }
        }
    }
}
