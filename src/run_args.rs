//! What the commands that run scenarios (`scenario`, `suite`, `compare`) share: the async
//! runtime, the reading of `--clients`/`--time-limit`, and writing a run's report.

use crate::outcome::Failure;
use lockpick_checker::results::RunResults;
use lockpick_harness::scenario::rules;
use std::path::Path;

pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime starts")
}

/// `--clients` and `--time-limit` as the run takes them; what they are checked against (the
/// scenario's faults, its locks) is [`RunPlan::new`](lockpick_harness::run::RunPlan::new)'s.
pub(crate) fn run_size_args(
    clients: Option<usize>,
    time_limit: Option<f64>,
) -> Result<(Option<usize>, Option<u64>), Failure> {
    if clients == Some(0) {
        return Err(Failure::usage(
            "read --clients: 0 clients would test nothing; allowed: 1 to 1000",
        ));
    }
    let max_secs = (rules::MAX_RUN_MS / 1000) as f64;
    let duration_ms = match time_limit {
        Some(t) if !(t > 0.0 && t <= max_secs) => {
            return Err(Failure::Usage(format!(
                "read --time-limit: {t:?} is out of range; allowed: 0.001 to {max_secs} seconds"
            )))
        }
        Some(t) => Some(((t * 1000.0).round() as u64).max(1)),
        None => None,
    };
    Ok((clients, duration_ms))
}

/// Writes the run's `report.html` and says where; a report that cannot be written is a
/// warning, not a reason to change the run's exit code. The history is read in one streaming
/// pass, never whole.
pub(crate) fn write_report(dir: &Path, results: &RunResults) {
    match lockpick_reports::write_run_report_streaming(dir, results) {
        Ok(path) => outln!("  report: {}", path.display()),
        Err(e) => eprintln!("lockpick: failed to {e}"),
    }
}
