//! SIGINT/SIGTERM: the first stops the workload gracefully (teardown and check still run);
//! the second kills every backend process at once and exits.

use crate::exit_code;
use crate::outcome::Failure;
use tokio::signal::unix::{signal, SignalKind};
use tokio_util::sync::CancellationToken;

/// Cancels the returned token on the first SIGINT or SIGTERM; on the second, kills every child
/// process and exits with [`exit_code::INTERRUPTED`]. Must be called inside the runtime.
pub fn install() -> Result<CancellationToken, Failure> {
    let token = CancellationToken::new();
    let mut int = signal(SignalKind::interrupt()).map_err(Failure::Signals)?;
    let mut term = signal(SignalKind::terminate()).map_err(Failure::Signals)?;
    let cancel = token.clone();
    tokio::spawn(async move {
        let mut seen = 0;
        loop {
            let name = tokio::select! {
                _ = int.recv() => "SIGINT",
                _ = term.recv() => "SIGTERM",
            };
            seen += 1;
            if seen == 1 {
                eprintln!(
                    "\nlockpick: stopping the workload; press Ctrl-C again to kill everything now"
                );
                lockpick_harness::run::note_interrupt(name);
                cancel.cancel();
            } else {
                lockpick_harness::processes::kill_all_children();
                // Nothing will be checked: say so in each run's run.json.
                lockpick_harness::run::mark_runs_killed(name);
                std::process::exit(i32::from(exit_code::INTERRUPTED));
            }
        }
    });
    Ok(token)
}
