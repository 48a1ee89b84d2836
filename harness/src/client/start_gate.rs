//! The start line of a run: every client waits there with its first session open (an adapter
//! process started and said hello) until all have one, so that starting a language runtime
//! and a library does not eat into the workload's time or the nemesis schedule.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Shared by the clients of one run and the runner.
#[derive(Debug, Default)]
pub struct StartGate {
    arrived: AtomicUsize,
    arrival: Notify,
    go: CancellationToken,
}

impl StartGate {
    /// A gate already open: clients go on at once (a client loop run outside a run).
    pub fn opened() -> StartGate {
        let gate = StartGate::default();
        gate.go.cancel();
        gate
    }

    /// A client has its first session (or gave up: the run stopped), and waits until the
    /// gate opens or `stop` is cancelled. True when it opened.
    pub async fn arrive(&self, stop: &CancellationToken) -> bool {
        self.arrived.fetch_add(1, Ordering::SeqCst);
        self.arrival.notify_one();
        tokio::select! {
            _ = self.go.cancelled() => true,
            _ = stop.cancelled() => false,
        }
    }

    /// Waits until `clients` clients arrived, or `limit` passed: a client that cannot start
    /// at all must not hold the run forever (it joins when it has a session). True when all
    /// arrived.
    pub async fn all_arrived(&self, clients: usize, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            // Registered before the count is read, so an arrival in between still wakes us.
            let notified = self.arrival.notified();
            if self.arrived.load(Ordering::SeqCst) >= clients {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return false;
            }
        }
    }

    /// Lets every client waiting at the gate, and every one arriving later, go.
    pub fn open(&self) {
        self.go.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn clients_wait_until_the_gate_opens_and_the_runner_until_all_arrived() {
        let gate = Arc::new(StartGate::default());
        let stop = CancellationToken::new();
        let mut waiting = Vec::new();
        for _ in 0..3 {
            let (gate, stop) = (gate.clone(), stop.clone());
            waiting.push(tokio::spawn(async move { gate.arrive(&stop).await }));
        }
        assert!(gate.all_arrived(3, Duration::from_secs(10)).await);
        assert!(!gate.all_arrived(4, Duration::from_millis(20)).await);
        assert!(waiting.iter().all(|w| !w.is_finished()));
        gate.open();
        for w in waiting {
            assert!(w.await.unwrap());
        }
        // Late arrivals go at once.
        assert!(gate.arrive(&stop).await);
    }

    #[tokio::test]
    async fn a_stopped_run_releases_the_waiting_clients() {
        let gate = StartGate::default();
        let stop = CancellationToken::new();
        stop.cancel();
        assert!(!gate.arrive(&stop).await);
    }
}
