//! `lockpick compare`: one scenario's workload and fault schedule, same seed, on each named
//! backend in turn, then `compare.html` side by side.

use crate::cli::CompareArgs;
use crate::outcome::{Exit, Failure, Outcome};
use crate::reproduce::Reproduce;
use crate::run_args::{run_size_args, runtime, write_report};
use lockpick_checker::verdict::Verdict;
use lockpick_harness::run::{run_plan, utc_stamp, RunOptions, RunPlan};
use lockpick_harness::scenario::load_scenario;
use lockpick_reports::{
    write_comparison, ComparedBackend, ComparedRun, Comparison, FaultColumn, COMPARE_DIR,
};
use std::time::SystemTime;

pub(super) fn compare(args: CompareArgs) -> Outcome {
    let scenario = load_scenario(&args.scenario)?;
    let (clients, duration_ms) = run_size_args(args.clients, args.time_limit)?;
    let names: Vec<&str> = args.backends.iter().map(|b| b.name()).collect();
    // One plan per lock, all resolved (and every override checked against every lock) before
    // the first run starts.
    let mut plans = Vec::new();
    for lock in &args.backends {
        let options = RunOptions {
            seed: args.seed,
            duration_ms,
            clients,
            store: args.store.clone(),
            backend: Some(lock.0),
            ..RunOptions::default()
        };
        let plan = RunPlan::new(&scenario, &options)?;
        let command = Reproduce {
            scenario: args.scenario.clone(),
            seed: plan.seed,
            time_limit: args.time_limit,
            clients: args.clients,
            backend: Some(lock.name().to_owned()),
            store: Some(args.store.clone()),
            ..Reproduce::default()
        }
        .command();
        plans.push((lock.name(), plan.reproducing(command)));
    }
    let seed = plans.first().map_or(scenario.seed, |(_, p)| p.seed);
    let mut extra = String::new();
    if let Some(t) = args.time_limit {
        extra.push_str(&format!(" --time-limit {t}"));
    }
    if let Some(c) = args.clients {
        extra.push_str(&format!(" --clients {c}"));
    }
    extra.push_str(&crate::reproduce::store_flag(&args.store));
    let faults: Vec<FaultColumn> = scenario
        .nemesis
        .faults
        .iter()
        .map(|f| FaultColumn {
            label: f.spec.label(),
            verb: f.spec.verb(),
        })
        .collect();
    eprintln!(
        "lockpick: comparing {} on {} with seed {seed}",
        scenario.name,
        names.join(", ")
    );
    let rt = runtime();
    let mut backends = Vec::new();
    let mut interrupted = false;
    let result = rt.block_on(async {
        let interrupt = crate::signals::install()?;
        for (name, plan) in &plans {
            if interrupt.is_cancelled() {
                interrupted = true;
                break;
            }
            let skipped = plan
                .swapped
                .as_ref()
                .map_or_else(Vec::new, |s| s.skipped.clone());
            for s in &skipped {
                eprintln!(
                    "lockpick: {name}: fault {} skipped: {}",
                    faults[s.index].label, s.reason
                );
            }
            eprintln!("lockpick: running {} on {name}", scenario.name);
            let outcome = run_plan(plan, interrupt.clone()).await?;
            out!(
                "{}",
                lockpick_reports::text_summary(&outcome.results, &outcome.dir)
            );
            write_report(&outcome.dir, &outcome.results);
            interrupted |= outcome.results.interrupted;
            backends.push(ComparedBackend {
                backend: (*name).to_owned(),
                run: ComparedRun {
                    dir: outcome.dir,
                    results: outcome.results,
                    skipped_faults: skipped.into_iter().map(|s| (s.index, s.reason)).collect(),
                },
            });
        }
        Ok::<_, Failure>(())
    });
    drop(rt);
    result?;
    let comparison = Comparison {
        scenario: scenario.name.clone(),
        seed,
        faults,
        backends,
        reproduce: format!(
            "{} compare {} --backends {} --seed {seed}{extra}",
            crate::reproduce::program(),
            args.scenario,
            names.join(",")
        ),
    };
    let out_dir = args.store.join(COMPARE_DIR).join(format!(
        "{}-{}-seed{seed}",
        scenario.name,
        utc_stamp(SystemTime::now())
    ));
    let path = write_comparison(&comparison, &out_dir).map_err(Failure::WriteOutput)?;
    outln!("compare: {}", path.display());
    if interrupted {
        return Ok(Exit::Interrupted);
    }
    // The worst verdict among the locks.
    let worst = comparison
        .backends
        .iter()
        .map(|b| b.run.results.verdict)
        .max();
    Ok(Exit::Verdict(worst.unwrap_or(Verdict::Unknown)))
}
