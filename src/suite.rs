//! `lockpick suite`: every shipped scenario with an expected verdict, over several seeds, as a
//! safety regression that fails when any run does not reach its verdict.

use crate::cli::SuiteArgs;
use crate::commands::runtime;
use crate::exit_code;
use lockpick_harness::run::{run_scenario, RunOptions};
use lockpick_harness::scenario::{list_scenarios, load_scenario};
use std::time::Instant;

/// The most runs per scenario (`--seeds`): a nightly suite, not an endless loop.
const MAX_SEEDS: u64 = 10_000;

/// One scenario's runs.
struct Row {
    name: String,
    expected: String,
    verdicts: Vec<String>,
    matched: u64,
    secs: f64,
    ops_per_sec: f64,
}

pub fn suite(args: SuiteArgs) -> u8 {
    if !(1..=MAX_SEEDS).contains(&args.seeds) {
        eprintln!(
            "lockpick: failed to read --seeds: {} is out of range; allowed: 1 to {MAX_SEEDS} (0 runs would test nothing)",
            args.seeds
        );
        return exit_code::USAGE;
    }
    let mut scenarios = Vec::new();
    for entry in list_scenarios() {
        if args
            .filter
            .as_deref()
            .is_some_and(|f| !entry.name.contains(f))
        {
            continue;
        }
        match load_scenario(&entry.path.to_string_lossy()) {
            Ok(s) if s.expected.is_some() => scenarios.push(s),
            Ok(_) => {}
            Err(e) => {
                eprintln!("lockpick: failed to {e}");
                return exit_code::USAGE;
            }
        }
    }
    if scenarios.is_empty() {
        eprintln!("lockpick: no scenario with an expected verdict matches");
        return exit_code::USAGE;
    }
    let rt = runtime();
    let mut rows = Vec::new();
    let mut code = exit_code::VALID;
    let result = rt.block_on(async {
        let interrupt = crate::signals::install()?;
        for scenario in &scenarios {
            let expected = scenario.expected.expect("filtered on expected");
            let mut row = Row {
                name: scenario.name.clone(),
                expected: expected.name().to_owned(),
                verdicts: Vec::new(),
                matched: 0,
                secs: 0.0,
                ops_per_sec: 0.0,
            };
            for k in 0..args.seeds {
                if interrupt.is_cancelled() {
                    return Ok::<_, anyhow::Error>(true);
                }
                let seed = scenario.seed.wrapping_add(k);
                let opts = RunOptions {
                    seed: Some(seed),
                    store: args.store.clone(),
                    reproduce: format!("cargo run -- scenario {} --seed {seed}", scenario.name),
                    ..RunOptions::default()
                };
                let started = Instant::now();
                let outcome = run_scenario(scenario, &opts, interrupt.clone()).await?;
                let r = &outcome.results;
                crate::commands::write_report(&outcome.dir, r, None);
                row.secs += started.elapsed().as_secs_f64();
                row.ops_per_sec += r.ops_per_sec() / args.seeds as f64;
                row.verdicts.push(r.verdict.name().to_owned());
                if r.verdict == expected {
                    row.matched += 1;
                } else {
                    eprintln!(
                        "MISMATCH {} seed {seed}: {} (expected {expected}); store {}; reproduce: {}",
                        scenario.name,
                        r.verdict,
                        outcome.dir.display(),
                        r.reproduce
                    );
                }
            }
            eprintln!(
                "{}: {}/{} as expected",
                row.name, row.matched, args.seeds
            );
            rows.push(row);
        }
        Ok(false)
    });
    drop(rt);
    match result {
        Err(e) => {
            eprintln!("lockpick: failed to {e:#}");
            return exit_code::HARNESS;
        }
        Ok(true) => code = exit_code::INTERRUPTED,
        Ok(false) => {}
    }
    println!(
        "{:<28} {:<9} {:>7} {:>9} {:>8}  verdicts",
        "scenario", "expected", "matched", "s/run", "ops/s"
    );
    for row in &rows {
        println!(
            "{:<28} {:<9} {:>3}/{:<3} {:>9.1} {:>8.0}  {}",
            row.name,
            row.expected,
            row.matched,
            row.verdicts.len(),
            row.secs / row.verdicts.len().max(1) as f64,
            row.ops_per_sec,
            row.verdicts.join(" ")
        );
        if row.matched < row.verdicts.len() as u64 && code == exit_code::VALID {
            code = exit_code::SUITE_MISMATCH;
        }
    }
    code
}
