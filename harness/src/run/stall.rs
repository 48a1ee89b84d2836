//! How late the harness's own runtime was during a workload: a task asks for a wake-up every
//! 10 ms and keeps the longest delay past it. The clients, the nemesis and the proxies' control
//! are tasks on that runtime, so a long delay is a time in which the run's timing was the
//! harness's, not the lock's (a starved machine, or a worker held by blocking work): run.json
//! says it, so that a verdict can be read against it.

use lockpick_store::RuntimeStall;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

const TICK: Duration = Duration::from_millis(10);

/// The watch over one workload; [`StallWatch::finish`] gives what it saw.
pub(crate) struct StallWatch {
    worst: Arc<Mutex<RuntimeStall>>,
    /// Wake-ups so far (a test waits for the watch to be running).
    #[cfg_attr(not(test), allow(dead_code))]
    ticks: Arc<AtomicU64>,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl StallWatch {
    /// Starts watching; times are counted from `start` (the history's clock).
    pub(crate) fn start(start: Instant) -> StallWatch {
        let worst = Arc::new(Mutex::new(RuntimeStall::default()));
        let ticks = Arc::new(AtomicU64::new(0));
        let stop = CancellationToken::new();
        let task = tokio::spawn({
            let (worst, stop, ticks) = (worst.clone(), stop.clone(), ticks.clone());
            async move {
                loop {
                    let asked = Instant::now();
                    tokio::select! {
                        // A wake-up due when the stop comes is still measured: the stall that
                        // held both back is the one to see.
                        biased;
                        _ = tokio::time::sleep(TICK) => {}
                        _ = stop.cancelled() => return,
                    }
                    ticks.fetch_add(1, Ordering::Relaxed);
                    let late = asked.elapsed().saturating_sub(TICK);
                    let mut w = worst.lock().unwrap_or_else(|p| p.into_inner());
                    if late.as_millis() as u64 > w.longest_ms {
                        w.longest_ms = late.as_millis() as u64;
                        w.at_ms = asked.saturating_duration_since(start).as_millis() as u64;
                    }
                }
            }
        });
        StallWatch {
            worst,
            ticks,
            stop,
            task,
        }
    }

    /// Stops watching and says the longest delay seen.
    pub(crate) async fn finish(self) -> RuntimeStall {
        self.stop.cancel();
        let _ = self.task.await;
        let w = self.worst.lock().unwrap_or_else(|p| p.into_inner());
        w.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::StallWatch;
    use std::time::{Duration, Instant};

    /// The runtime's one thread held for 300 ms by blocking work, once the watch runs: the
    /// watch sees a delay of at least that (its wake-up could not run meanwhile). A
    /// current-thread runtime, so that nothing but the blocking task can run in that time.
    #[test]
    fn a_worker_held_by_blocking_work_shows_as_a_stall() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let seen = runtime.block_on(async {
            let watch = StallWatch::start(Instant::now());
            // Its timer must be set before the worker is taken, however slow the machine.
            while watch.ticks.load(std::sync::atomic::Ordering::Relaxed) < 2 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            tokio::spawn(async { std::thread::sleep(Duration::from_millis(300)) })
                .await
                .unwrap();
            watch.finish().await
        });
        assert!(seen.longest_ms >= 250, "{seen:?}");
    }
}
