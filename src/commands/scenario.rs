//! `lockpick scenario`: run one scenario, check it, write its report.

use crate::cli::ScenarioArgs;
use crate::outcome::{Exit, Failure, Outcome};
use crate::printable::printable;
use crate::run_args::{run_size_args, runtime, write_report};
use lockpick_harness::run::{run_scenario, RunOptions};
use lockpick_harness::scenario::load_scenario;
use std::io::IsTerminal;

/// The command line that repeats a run.
fn reproduce(args: &ScenarioArgs, seed: u64) -> String {
    crate::reproduce::Reproduce {
        scenario: args.scenario.clone(),
        seed,
        time_limit: args.time_limit,
        clients: args.clients,
        toxiproxy: args.toxiproxy.map(|t| t.to_string()),
        backend: args.backend.map(|b| b.name().to_owned()),
        external: args.external.clone(),
        resource: args.resource,
    }
    .command()
}

pub(super) fn scenario(args: ScenarioArgs) -> Outcome {
    let scenario = load_scenario(&args.scenario)?;
    let backend = args.backend.map(|b| b.0);
    let (_, duration_ms) = run_size_args(&scenario, args.clients, args.time_limit)?;
    if !args.external.is_empty() {
        let moved = backend.map(|b| scenario.with_lock(b).0);
        moved
            .as_ref()
            .unwrap_or(&scenario)
            .check_external(&args.external)
            .map_err(Failure::Usage)?;
    }
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
        let interrupt = crate::signals::install()?;
        // A server's log tail may be in the message; the reproduce line follows it.
        run_scenario(&scenario, &opts, interrupt)
            .await
            .map_err(|source| Failure::Run {
                source: Box::new(source),
                reproduce: Some(command.clone()),
            })
    });
    drop(rt);
    let outcome = outcome?;
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
    write_report(&outcome.dir, &outcome.results);
    Ok(if outcome.results.interrupted {
        Exit::Interrupted
    } else {
        Exit::Verdict(outcome.results.verdict)
    })
}
