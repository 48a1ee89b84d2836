//! One run, decided before anything starts: a scenario and the command line's overrides
//! resolved, once, into an immutable plan — the scenario as it runs (another lock swapped in,
//! its faults that lock cannot take left out), the seed, the clients, the workload length and
//! the fault schedule drawn from them. `scenario`, `suite`, `compare` and `matrix` build plans;
//! the runner only carries them out, so a value is never resolved twice nor differently.

use super::error::RunError;
use super::options::RunOptions;
use crate::fault::Step;
use crate::locks::LockPreset;
use crate::nemesis::{build_schedule, build_soak_schedule};
use crate::scenario::{check_overrides, Scenario, SkippedFault};
use crate::vocab::rules::MAX_SCHEDULE_STEPS;

/// A run ready to carry out. Built by [`RunPlan::new`]; read-only afterwards.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// The scenario as it runs: the file's, or with `--backend`'s lock in its place.
    pub scenario: Scenario,
    /// The lock swapped in with `--backend`, the faults left out for it, and the file's own
    /// scenario, for the note at the top of the stored `scenario.toml`.
    pub swapped: Option<Swapped>,
    /// Seed of every random choice of the run.
    pub seed: u64,
    /// Logical clients.
    pub clients: usize,
    /// Length of the workload.
    pub duration_ms: u64,
    /// For a soak, the length of one cycle of its fault schedule: the scenario's own
    /// workload length.
    pub soak_cycle_ms: Option<u64>,
    /// The fault schedule, drawn from `seed` for `duration_ms` and `clients`: what the
    /// nemesis carries out and `schedule.json` holds.
    pub schedule: Vec<Step>,
    /// Where and how the run is carried out (store, proxies, external servers, …).
    pub options: RunOptions,
}

/// `--backend`: the lock that replaced the scenario's own, and what that changed.
#[derive(Debug, Clone)]
pub struct Swapped {
    pub lock: &'static LockPreset,
    /// The scenario as the file wrote it.
    pub original: Scenario,
    /// Faults of the file the swapped-in server cannot take.
    pub skipped: Vec<SkippedFault>,
}

impl RunPlan {
    /// Resolves `scenario` with `options`' overrides (`--seed`, `--clients`, `--time-limit`,
    /// `--backend`) into a plan. `Err` is a usage error: an override or an `--external` list
    /// the scenario cannot take, in words that read after "failed to".
    pub fn new(scenario: &Scenario, options: &RunOptions) -> Result<RunPlan, RunError> {
        let (scenario, swapped) = match options.backend {
            Some(lock) => {
                let (ran, skipped) = scenario.with_lock(lock);
                (
                    ran,
                    Some(Swapped {
                        lock,
                        original: scenario.clone(),
                        skipped,
                    }),
                )
            }
            None => (scenario.clone(), None),
        };
        if !options.external.is_empty() {
            scenario
                .check_external(&options.external)
                .map_err(RunError::External)?;
        }
        check_overrides(&scenario, options.clients, options.duration_ms)
            .map_err(RunError::Options)?;
        let seed = Self::seed_for(&scenario, options);
        let clients = options.clients.unwrap_or(scenario.workload.clients);
        let (duration_ms, schedule, soak_cycle_ms) = match options.soak_ms {
            Some(soak) => {
                let cycle = scenario.workload.duration_ms;
                let schedule = build_soak_schedule(&scenario, seed, soak, clients, cycle);
                if schedule.len() as u64 > MAX_SCHEDULE_STEPS {
                    return Err(RunError::Options(format!(
                        "soak {} for {} s: its faults recurring every {} ms make {} schedule steps; allowed at most {MAX_SCHEDULE_STEPS} (a shorter soak, or a scenario with fewer faults)",
                        scenario.name,
                        soak / 1000,
                        cycle,
                        schedule.len()
                    )));
                }
                (soak, schedule, Some(cycle))
            }
            None => {
                let duration_ms = options.duration_ms.unwrap_or(scenario.workload.duration_ms);
                let schedule = build_schedule(&scenario, seed, duration_ms, clients);
                (duration_ms, schedule, None)
            }
        };
        Ok(RunPlan {
            scenario,
            swapped,
            seed,
            clients,
            duration_ms,
            soak_cycle_ms,
            schedule,
            options: options.clone(),
        })
    }

    /// The seed a plan of `scenario` with `options` runs with: `--seed`, else the file's. For
    /// the command that repeats a run that could not even be planned.
    pub fn seed_for(scenario: &Scenario, options: &RunOptions) -> u64 {
        options.seed.unwrap_or(scenario.seed)
    }

    /// The plan with `command` as the command line that repeats it (stored in
    /// `results.json`); a command learns the seed it prints from the plan it built.
    pub fn reproducing(mut self, command: String) -> RunPlan {
        self.options.reproduce = command;
        self
    }
}
