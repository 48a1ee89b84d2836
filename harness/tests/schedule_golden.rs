//! A seed names one schedule, forever: every shipped scenario's `schedule.json` for seeds 1–3
//! must stay byte-identical across refactors (a printed `--seed N` has to reproduce the run it
//! came from). The digests live in `tests/golden/schedules.txt`; after a change that is meant
//! to move schedules (a scenario file edited, a fault's draw changed), rewrite it with
//! `LOCKPICK_BLESS=1 cargo test -p lockpick-harness --test schedule_golden` and say why in the
//! commit.

use lockpick_harness::matrix::{load_matrix, plan_matrix};
use lockpick_harness::nemesis::build_schedule;
use lockpick_harness::run::{RunOptions, RunPlan};
use lockpick_harness::scenario::{list_scenarios, load_scenario, Scenario};
use std::fmt::Write;
use std::path::Path;

/// FNV-1a, 64 bits: stable across Rust releases, unlike `DefaultHasher`.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// One line per seed 1–3 of `scenario`: the digest of the bytes the runner writes to
/// `schedule.json`, and the number of steps.
fn digest_seeds(out: &mut String, name: &str, scenario: &Scenario) {
    for seed in 1..=3 {
        let steps = build_schedule(
            scenario,
            seed,
            scenario.workload.duration_ms,
            scenario.workload.clients,
        );
        // The runner carries out a plan: its schedule must be the same one.
        let plan = RunPlan::new(
            scenario,
            &RunOptions {
                seed: Some(seed),
                ..RunOptions::default()
            },
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            plan.schedule, steps,
            "{name} seed {seed}: the plan's schedule"
        );
        let bytes = serde_json::to_vec_pretty(&steps).expect("schedule serializes");
        writeln!(out, "{name} {seed} {:016x} {}", fnv1a(&bytes), steps.len()).unwrap();
    }
}

/// One line per (scenario, seed), then per (matrix cell, seed) of every shipped matrix.
fn digests() -> String {
    let mut out = String::new();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let shipped = shipped
        .canonicalize()
        .expect("the shipped scenarios folder");
    for entry in list_scenarios() {
        // Shipped: in scenarios/ or one of its group folders (scenarios/known-bugs/).
        let folder = match entry.group {
            Some(_) => entry.path.parent().and_then(Path::parent),
            None => entry.path.parent(),
        };
        if folder.and_then(|p| p.canonicalize().ok()) != Some(shipped.clone()) {
            continue;
        }
        let scenario = load_scenario(entry.path.to_str().expect("utf-8 path"))
            .unwrap_or_else(|e| panic!("{}: {e}", entry.name));
        digest_seeds(&mut out, &entry.qualified_name(), &scenario);
    }
    let mut matrices: Vec<_> = std::fs::read_dir(shipped.join("matrix"))
        .expect("scenarios/matrix")
        .map(|e| e.expect("a matrix file").path())
        .collect();
    matrices.sort();
    for path in matrices {
        let matrix = load_matrix(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // Each cell's scenario as the matrix builds it and runs it.
        for cell in plan_matrix(&matrix).expect("the matrix plans") {
            if let Some(scenario) = &cell.built {
                digest_seeds(&mut out, &format!("matrix:{}", cell.scenario), scenario);
            }
        }
    }
    out
}

#[test]
fn every_shipped_schedule_is_unchanged_for_seeds_1_to_3() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/schedules.txt");
    let now = digests();
    if std::env::var_os("LOCKPICK_BLESS").is_some() {
        std::fs::write(&golden, &now).expect("write the golden file");
        return;
    }
    let before = std::fs::read_to_string(&golden).expect("tests/golden/schedules.txt");
    let changed: Vec<String> = before
        .lines()
        .zip(now.lines())
        .filter(|(a, b)| a != b)
        .map(|(a, b)| format!("  was {a}\n  now {b}"))
        .collect();
    assert!(
        changed.is_empty() && before.lines().count() == now.lines().count(),
        "schedules moved ({} lines before, {} now); first differences:\n{}",
        before.lines().count(),
        now.lines().count(),
        changed
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
