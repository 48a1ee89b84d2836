//! Command-line overrides of a loaded scenario (`--clients`, `--time-limit`): checked against
//! the same limits as the file, and against the faults the file already holds; and a lock
//! swapped in with `--backend` against the scenario's `[workload] locks`.

use super::model::Scenario;
use crate::vocab::rules::{MAX_CLIENTS, MAX_RUN_MS};

/// Checks that `scenario` can run with `clients` clients for `duration_ms` (each `None`: the
/// scenario's own). The error reads after "failed to".
pub fn check_overrides(
    scenario: &Scenario,
    clients: Option<usize>,
    duration_ms: Option<u64>,
) -> Result<(), String> {
    if scenario.lock.count > 1 {
        if let Err(why) = scenario.client.kind.many_locks() {
            return Err(format!(
                "run {} with client {:?}: the scenario spreads its operations over {} locks ([workload] locks) and this client takes one lock ({why}); allowed: a client kind that takes many locks, or a scenario with locks = 1",
                scenario.name,
                scenario.client.kind.name(),
                scenario.lock.count
            ));
        }
    }
    if let Some(n) = clients {
        if !(1..=MAX_CLIENTS).contains(&n) {
            return Err(format!(
                "read --clients: {n} is out of range; allowed: 1 to {MAX_CLIENTS}"
            ));
        }
        // A fault aimed at client k needs a client k.
        for fault in &scenario.nemesis.faults {
            if let Some(k) = fault.spec.aimed_at_client().filter(|&k| k >= n) {
                return Err(format!(
                    "read --clients: {n} client(s), but fault {} (line {} of {}) is aimed at client {k}; allowed: {} to {MAX_CLIENTS}",
                    fault.spec.name(),
                    fault.line,
                    scenario.path.display(),
                    k + 1
                ));
            }
        }
    }
    if let Some(ms) = duration_ms {
        if !(1..=MAX_RUN_MS).contains(&ms) {
            return Err(format!(
                "read --time-limit: {} s is out of range; allowed: 0.001 to {} seconds",
                ms as f64 / 1000.0,
                MAX_RUN_MS / 1000
            ));
        }
        crate::fault::check_schedule_size(&scenario.nemesis.faults, ms)
            .map_err(|(_, _, why)| format!("read --time-limit: {why}"))?;
    }
    Ok(())
}
