//! The renewal watchdog: extends the holder's lease every third of its length, stops when the
//! lock is lost, and stands still while its client is paused (a GC pause stops every thread).

use super::lock::{Grant, LockSession, Outcome};
use super::pause::PausePoints;
use crate::recorder::Recorder;
use lockpick_checker::history::{EventKind, Process, Value, F};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How the watchdog ended.
#[derive(Debug, Default, Clone, Copy)]
pub struct WatchdogEnd {
    /// A renewal's outcome was unknown: the process must be retired after the round.
    pub unknown: bool,
}

/// A running watchdog.
pub struct Watchdog {
    stop: CancellationToken,
    task: JoinHandle<WatchdogEnd>,
}

impl Watchdog {
    /// Starts renewing `grant`. Precondition: the grant has a lease.
    pub fn start<S: LockSession>(
        mut session: S,
        grant: Grant,
        process: Process,
        lock: String,
        recorder: Arc<Recorder>,
        points: Arc<PausePoints>,
    ) -> Watchdog {
        let stop = CancellationToken::new();
        let period =
            Duration::from_millis(grant.lease_ms.unwrap_or(1000) / 3).max(Duration::from_millis(1));
        let stopped = stop.clone();
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = stopped.cancelled() => return WatchdogEnd::default(),
                    _ = tokio::time::sleep(period) => {}
                }
                if points.is_paused() {
                    continue;
                }
                let record = |kind, error| {
                    recorder.record(
                        process,
                        kind,
                        F::Renew,
                        Some(&lock),
                        Value::default(),
                        error,
                    )
                };
                record(EventKind::Invoke, None);
                match session.renew(&grant).await {
                    Outcome::Ok(()) => {
                        record(EventKind::Ok, None);
                    }
                    Outcome::Fail(e) => {
                        record(EventKind::Fail, Some(e));
                        return WatchdogEnd::default();
                    }
                    Outcome::Info(e) => {
                        record(EventKind::Info, Some(e));
                        return WatchdogEnd { unknown: true };
                    }
                }
            }
        });
        Watchdog { stop, task }
    }

    /// Stops renewing and waits for an in-flight renewal to be recorded.
    pub async fn stop(self) -> WatchdogEnd {
        self.stop.cancel();
        self.task.await.unwrap_or_default()
    }
}
