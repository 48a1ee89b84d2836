//! `lockpick compare`: one scenario's workload and fault schedule, same seed, on each named
//! backend in turn, then `compare.html` side by side.

use crate::cli::CompareArgs;
use crate::commands::{run_size_args, runtime, write_report};
use crate::exit_code;
use lockpick_harness::locks::{find_lock, lock_names};
use lockpick_harness::run::{run_scenario, utc_stamp, RunOptions};
use lockpick_harness::scenario::load_scenario;
use lockpick_reports::{
    write_comparison, ComparedBackend, ComparedRun, Comparison, FaultColumn, COMPARE_DIR,
};
use std::time::SystemTime;

pub fn compare(args: CompareArgs) -> u8 {
    let scenario = match load_scenario(&args.scenario) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("lockpick: failed to {e}");
            return exit_code::USAGE;
        }
    };
    let parsed = run_size_args(&scenario, args.clients, args.time_limit);
    let (clients, duration_ms) = match parsed {
        Ok(p) => p,
        Err(e) => {
            eprintln!("lockpick: failed to {e}");
            return exit_code::USAGE;
        }
    };
    let seed = args.seed.unwrap_or(scenario.seed);
    let mut extra = String::new();
    if let Some(t) = args.time_limit {
        extra.push_str(&format!(" --time-limit {t}"));
    }
    if let Some(c) = args.clients {
        extra.push_str(&format!(" --clients {c}"));
    }
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
        args.backends.join(", ")
    );
    let rt = runtime();
    let mut backends = Vec::new();
    let mut interrupted = false;
    let result = rt.block_on(async {
        let interrupt = crate::signals::install()?;
        for name in &args.backends {
            if interrupt.is_cancelled() {
                interrupted = true;
                break;
            }
            let Some(kind) = find_lock(name) else {
                let why = format!("unknown backend (known: {})", lock_names().join(", "));
                eprintln!("lockpick: {name}: skipped: {why}");
                backends.push(ComparedBackend {
                    backend: name.clone(),
                    run: Err(why),
                });
                continue;
            };
            let (_, skipped) = scenario.with_lock(kind);
            for s in &skipped {
                eprintln!(
                    "lockpick: {name}: fault {} skipped: {}",
                    faults[s.index].label, s.reason
                );
            }
            let opts = RunOptions {
                seed: Some(seed),
                duration_ms,
                clients,
                store: args.store.clone(),
                reproduce: format!(
                    "cargo run -- scenario {} --seed {seed} --backend {name}{extra}",
                    args.scenario
                ),
                backend: Some(kind),
                ..RunOptions::default()
            };
            eprintln!("lockpick: running {} on {name}", scenario.name);
            let outcome = run_scenario(&scenario, &opts, interrupt.clone()).await?;
            print!(
                "{}",
                lockpick_reports::text_summary(&outcome.results, &outcome.dir)
            );
            write_report(&outcome.dir, &outcome.results, None);
            interrupted |= outcome.results.interrupted;
            backends.push(ComparedBackend {
                backend: name.clone(),
                run: Ok(ComparedRun {
                    dir: outcome.dir,
                    results: outcome.results,
                    skipped_faults: skipped.into_iter().map(|s| (s.index, s.reason)).collect(),
                }),
            });
        }
        Ok::<_, anyhow::Error>(())
    });
    drop(rt);
    if let Err(e) = result {
        eprintln!("lockpick: failed to {e:#}");
        return exit_code::HARNESS;
    }
    let comparison = Comparison {
        scenario: scenario.name.clone(),
        seed,
        faults,
        backends,
        reproduce: format!(
            "cargo run -- compare {} --backends {} --seed {seed}{extra}",
            args.scenario,
            args.backends.join(",")
        ),
    };
    let out_dir = args.store.join(COMPARE_DIR).join(format!(
        "{}-{}-seed{seed}",
        scenario.name,
        utc_stamp(SystemTime::now())
    ));
    match write_comparison(&comparison, &out_dir) {
        Ok(path) => println!("compare: {}", path.display()),
        Err(e) => {
            eprintln!("lockpick: failed to {e}");
            return exit_code::HARNESS;
        }
    }
    if interrupted {
        return exit_code::INTERRUPTED;
    }
    // The worst verdict among the backends that ran.
    let worst = comparison
        .backends
        .iter()
        .filter_map(|b| b.run.as_ref().ok().map(|r| r.results.verdict))
        .max();
    worst.map_or(exit_code::UNKNOWN, crate::commands::verdict_code)
}
