//! `lockpick scenario`: run one scenario, check it, write its report.

use crate::cli::ScenarioArgs;
use crate::outcome::{Exit, Failure, Outcome};
use crate::printable::printable;
use crate::run_args::{run_size_args, runtime, write_report};
use lockpick_harness::run::{run_plan, RunOptions, RunPlan};
use lockpick_harness::scenario::load_scenario;
use std::io::IsTerminal;

/// The command line that repeats a run.
fn reproduce(args: &ScenarioArgs, seed: u64) -> String {
    crate::reproduce::Reproduce {
        scenario: args.scenario.clone(),
        seed,
        time_limit: args.time_limit,
        soak: args.soak.as_ref().map(|s| s.text.clone()),
        clients: args.clients,
        toxiproxy: args.toxiproxy.map(|t| t.to_string()),
        backend: args.backend.map(|b| b.name().to_owned()),
        external: args.external.clone(),
        resource: args.resource,
        store: Some(args.store.clone()),
    }
    .command()
}

pub(super) fn scenario(args: ScenarioArgs) -> Outcome {
    let scenario = load_scenario(&args.scenario)?;
    for warning in scenario.client.options.warnings() {
        eprintln!(
            "lockpick: warning: {}: {}",
            args.scenario,
            printable(&warning)
        );
    }
    let (clients, duration_ms) = run_size_args(args.clients, args.time_limit)?;
    let options = RunOptions {
        seed: args.seed,
        duration_ms,
        soak_ms: args.soak.as_ref().map(|s| s.ms),
        clients,
        toxiproxy: args.toxiproxy,
        store: args.store.clone(),
        progress: std::io::stderr().is_terminal(),
        backend: args.backend.map(|b| b.0),
        keep_data: args.keep_data,
        external: args.external.clone(),
        resource: args.resource,
        ..RunOptions::default()
    };
    // Every override is resolved and checked here, once; the seed printed is the plan's.
    let plan = RunPlan::new(&scenario, &options).map_err(|source| Failure::Run {
        source: Box::new(source),
        reproduce: Some(reproduce(&args, RunPlan::seed_for(&scenario, &options))),
    })?;
    let command = reproduce(&args, plan.seed);
    let plan = plan.reproducing(command.clone());
    eprintln!(
        "lockpick: scenario {} with seed {}",
        scenario.name, plan.seed
    );
    let rt = runtime();
    let outcome = rt.block_on(async {
        let interrupt = crate::signals::install()?;
        // A server's log tail may be in the message; the reproduce line follows it.
        run_plan(&plan, interrupt)
            .await
            .map_err(|source| Failure::Run {
                source: Box::new(source),
                reproduce: Some(command.clone()),
            })
    });
    drop(rt);
    let outcome = outcome?;
    out!(
        "{}",
        printable(&lockpick_reports::text_summary(
            &outcome.results,
            &outcome.dir
        ))
    );
    // What the scenario claims, e.g. that Redlock grants no fencing token.
    if !scenario.description.is_empty() {
        outln!("  scenario: {}", scenario.description);
    }
    write_report(&outcome.dir, &outcome.results);
    Ok(if outcome.results.interrupted {
        Exit::Interrupted
    } else {
        Exit::Verdict(outcome.results.verdict)
    })
}
