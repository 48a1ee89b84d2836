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

/// The error of a renewal dropped, still in flight, when the hold ended.
pub const DROPPED: &str = "dropped: the hold ended while it was in flight";

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
                let droppable = session.renewal_may_be_dropped();
                let renewed = tokio::select! {
                    biased;
                    renewed = session.renew(&grant) => renewed,
                    // The hold ended with the renewal still out: its outcome stays unknown,
                    // and the release goes now (see `LockSession::renewal_may_be_dropped`).
                    _ = stopped.cancelled(), if droppable => {
                        record(EventKind::Info, Some(DROPPED.to_owned()));
                        return WatchdogEnd { unknown: true };
                    }
                };
                match renewed {
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

    /// Stops renewing and waits for an in-flight renewal to be recorded: at once, as dropped,
    /// where the session allows it, else when it completes.
    pub async fn stop(self) -> WatchdogEnd {
        self.stop.cancel();
        self.task.await.unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::{Watchdog, DROPPED};
    use crate::client::lock::{Grant, LockSession, Outcome};
    use crate::client::pause::PausePoints;
    use crate::recorder::Recorder;
    use lockpick_checker::history::Process;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    /// A session whose renewals never answer (a keep-alive to a member cut off).
    #[derive(Clone)]
    struct Stuck {
        droppable: bool,
    }

    impl LockSession for Stuck {
        async fn acquire(&mut self, _: &str, _: Instant) -> Outcome<Grant> {
            unreachable!("the watchdog only renews")
        }
        async fn release(&mut self, _: &Grant) -> Outcome<()> {
            unreachable!("the watchdog only renews")
        }
        async fn renew(&mut self, _: &Grant) -> Outcome<()> {
            // Far past the test's patience: only dropping it ends it early.
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Outcome::Ok(())
        }
        fn renewal_may_be_dropped(&self) -> bool {
            self.droppable
        }
    }

    fn grant() -> Grant {
        Grant {
            token: None,
            holder: "h".into(),
            lease_ms: Some(30),
            sent_at: Instant::now(),
            request_sent: None,
            owner: None,
        }
    }

    /// Stops a watchdog whose renewal is stuck, once that renewal is in flight; `None` if the
    /// stop had not returned in `patience` (it waits for the renewal).
    async fn stop_while_stuck(droppable: bool, patience: Duration) -> Option<(bool, String)> {
        let dir = tempfile::tempdir().unwrap();
        let recorder = Arc::new(Recorder::create(&dir.path().join("history.jsonl")).unwrap());
        let dog = Watchdog::start(
            Stuck { droppable },
            grant(),
            Process::Client(0),
            "lock".into(),
            recorder.clone(),
            Arc::new(PausePoints::default()),
        );
        // The first renewal goes out after a third of the 30 ms lease and never answers.
        while recorder.completed_ops() == 0 && !history(&recorder).contains("invoke") {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let end = tokio::time::timeout(patience, dog.stop()).await.ok()?;
        Some((end.unknown, history(&recorder)))
    }

    fn history(recorder: &Recorder) -> String {
        recorder.flush().unwrap();
        std::fs::read_to_string(recorder.path()).unwrap()
    }

    #[tokio::test]
    async fn a_renewal_stuck_in_a_fault_does_not_hold_back_the_release() {
        let (unknown, history) = stop_while_stuck(true, Duration::from_secs(60))
            .await
            .expect("the stop returns without waiting for the renewal");
        assert!(unknown, "a dropped renewal's outcome is unknown");
        let lines: Vec<&str> = history.lines().collect();
        assert_eq!(lines.len(), 2, "{history}");
        assert!(
            lines[0].contains(r#""type":"invoke","f":"renew""#),
            "{history}"
        );
        assert!(
            lines[1].contains(r#""type":"info","f":"renew""#),
            "{history}"
        );
        assert!(lines[1].contains(DROPPED), "{history}");
    }

    #[tokio::test]
    async fn a_renewal_on_pipes_is_waited_for() {
        // An adapter's answer must be read before its next request: the stop waits.
        assert!(stop_while_stuck(false, Duration::from_millis(300))
            .await
            .is_none());
    }
}
