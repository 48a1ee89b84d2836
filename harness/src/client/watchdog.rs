//! The renewal watchdog: extends the holder's lease every third of its length, stops when the
//! lock is lost, and stands still while its client is paused (a GC pause stops every thread).

use super::lock::{Grant, LockSession, Outcome};
use super::pause::PausePoints;
use crate::recorder::Recorder;
use lockpick_checker::history::{EventKind, Process, Value, F};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The error of a renewal dropped, still in flight, when the hold ended.
pub const DROPPED: &str = "dropped: the hold ended while it was in flight";

/// The error of a renewal given up when the lease ran out by the client's own count.
pub const RAN_OUT: &str = "lease ran out by the client's count, no renewal acknowledged";

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
        let lease = Duration::from_millis(grant.lease_ms.unwrap_or(1000));
        let period = (lease / 3).max(Duration::from_millis(1));
        let counts = session.stops_at_own_lease_count();
        let stopped = stop.clone();
        let task = tokio::spawn(async move {
            // The lease by the client's count: from the grant's `sent_at` (a grant after a long
            // wait may come with little of it left), then from each acknowledged renewal's send.
            let mut lease_from = grant.sent_at;
            let mut paused = false;
            loop {
                // A recipe that counts its lease renews on the lease's clock, at once when a
                // third of it has gone, and while paused looks again every 10 ms (a sleep of
                // nothing would spin through the pause) so that it acts as soon as it wakes; the
                // others a third of a lease after the last try.
                let due = match (counts, paused) {
                    (true, false) => {
                        (lease_from + period).saturating_duration_since(Instant::now())
                    }
                    (true, true) => period.min(Duration::from_millis(10)),
                    (false, _) => period,
                };
                tokio::select! {
                    _ = stopped.cancelled() => return WatchdogEnd::default(),
                    _ = tokio::time::sleep(due) => {}
                }
                paused = points.is_paused();
                if paused {
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
                let ran_out = lease_from + lease;
                if counts && Instant::now() >= ran_out {
                    // Woken past the count (a pause): nothing left to renew.
                    record(EventKind::Invoke, None);
                    record(EventKind::Fail, Some(RAN_OUT.to_owned()));
                    return WatchdogEnd::default();
                }
                record(EventKind::Invoke, None);
                let sent = Instant::now();
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
                    // The lease ran out by the client's count with the renewal still out: the
                    // recipe stops trusting the lock (see
                    // `LockSession::stops_at_own_lease_count`); the renewal is given up, and the
                    // session, which may still carry it, is retired.
                    _ = tokio::time::sleep_until(ran_out.into()), if counts && droppable => {
                        record(EventKind::Fail, Some(RAN_OUT.to_owned()));
                        return WatchdogEnd { unknown: true };
                    }
                };
                match renewed {
                    Outcome::Ok(()) => {
                        record(EventKind::Ok, None);
                        lease_from = sent;
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
    use super::{Watchdog, DROPPED, RAN_OUT};
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

    /// A recipe that counts its own lease (`LockSession::stops_at_own_lease_count`); its
    /// renewals answer at once, or never when `hangs`.
    #[derive(Clone)]
    struct Counting {
        hangs: bool,
    }

    impl LockSession for Counting {
        async fn acquire(&mut self, _: &str, _: Instant) -> Outcome<Grant> {
            unreachable!("the watchdog only renews")
        }
        async fn release(&mut self, _: &Grant) -> Outcome<()> {
            unreachable!("the watchdog only renews")
        }
        async fn renew(&mut self, _: &Grant) -> Outcome<()> {
            if self.hangs {
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
            Outcome::Ok(())
        }
        fn renewal_may_be_dropped(&self) -> bool {
            true
        }
        fn stops_at_own_lease_count(&self) -> bool {
            true
        }
    }

    /// Runs a watchdog of `session` on a grant of a `lease_ms` lease counted from `ago` before
    /// now, until its history has `lines` lines (or `patience` passed); its history.
    async fn watch<S: LockSession>(
        session: S,
        lease_ms: u64,
        ago: Duration,
        lines: usize,
        patience: Duration,
    ) -> String {
        let dir = tempfile::tempdir().unwrap();
        let recorder = Arc::new(Recorder::create(&dir.path().join("history.jsonl")).unwrap());
        let grant = Grant {
            lease_ms: Some(lease_ms),
            sent_at: Instant::now() - ago,
            ..grant()
        };
        let dog = Watchdog::start(
            session,
            grant,
            Process::Client(0),
            "lock".into(),
            recorder.clone(),
            Arc::new(PausePoints::default()),
        );
        let until = Instant::now() + patience;
        while history(&recorder).lines().count() < lines && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        dog.stop().await;
        history(&recorder)
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

    #[tokio::test]
    async fn a_recipe_that_counts_its_lease_renews_at_once_a_grant_with_little_of_it_left() {
        // Granted after a long wait, the lease last renewed 50 s of a 60 s lease ago: the first
        // renewal goes at once, not 20 s after the grant (when the lease is long gone).
        let history = watch(
            Counting { hangs: false },
            60_000,
            Duration::from_secs(50),
            2,
            Duration::from_secs(10),
        )
        .await;
        let lines: Vec<&str> = history.lines().collect();
        assert!(lines.len() >= 2, "a renewal within seconds: {history}");
        assert!(lines[1].contains(r#""type":"ok","f":"renew""#), "{history}");
    }

    #[tokio::test]
    async fn a_recipe_that_counts_its_lease_stops_trusting_it_when_the_count_runs_out() {
        // A 300 ms lease counted from 250 ms ago; the renewal (at once) hangs: at the count's
        // end the renewal is given up and recorded failed, which ends the holder's belief.
        let started = Instant::now();
        let history = watch(
            Counting { hangs: true },
            300,
            Duration::from_millis(250),
            2,
            Duration::from_secs(30),
        )
        .await;
        let lines: Vec<&str> = history.lines().collect();
        assert_eq!(lines.len(), 2, "{history}");
        assert!(
            lines[0].contains(r#""type":"invoke","f":"renew""#),
            "{history}"
        );
        assert!(
            lines[1].contains(r#""type":"fail","f":"renew""#),
            "{history}"
        );
        assert!(lines[1].contains(RAN_OUT), "{history}");
        // Not before the count ran out (the hang is an hour).
        assert!(started.elapsed() >= Duration::from_millis(50), "{history}");
    }

    #[tokio::test]
    async fn a_library_s_renewal_is_not_cut_short_by_lockpick_s_count() {
        // The same hanging renewal on a session that does not count its lease (an adapter's
        // library): nothing is recorded but the renewal's invocation, its verdict its own.
        let history = watch(
            Stuck { droppable: true },
            300,
            Duration::from_millis(250),
            2,
            Duration::from_millis(800),
        )
        .await;
        let lines: Vec<&str> = history.lines().collect();
        assert_eq!(
            lines.len(),
            2,
            "invoke, then dropped at the stop: {history}"
        );
        assert!(lines[1].contains(DROPPED), "{history}");
    }
}
