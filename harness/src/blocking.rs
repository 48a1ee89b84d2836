//! Blocking work an async task must do (a run's check, its report, a server's setup tool such as
//! `initdb`) without holding one of the runtime's worker threads while it lasts.
//!
//! Why: the runs a matrix, an exploration or a suite makes at once share one runtime, and their
//! clients, nemesis and proxies are tasks on it. On a 2-core machine it has two workers; two
//! runs starting PostgreSQL at the same moment held both in `initdb` for 1.4 s, and every other
//! run's clients stood still that long: a holder's `COMMIT` came after the server's
//! `idle_in_transaction_session_timeout` had ended its transaction, a double holder that no
//! fault made (default matrix, 2026-11-30, pg-for-update × clock-jump, server-pause and
//! node-crash, seed 4: one 1.4-1.7 s gap in all three histories, ending at the same instant).

use tokio::runtime::{Handle, RuntimeFlavor};

/// Runs `f` on this thread, first handing the worker's other tasks to another thread (tokio's
/// `block_in_place`), so that the runtime's other tasks keep running while `f` blocks. On a
/// current-thread runtime (tests) or outside one, `f` just runs: there is nothing to hand over.
pub fn off_runtime<T>(f: impl FnOnce() -> T) -> T {
    match Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(f),
        _ => f(),
    }
}

#[cfg(test)]
mod tests {
    use super::off_runtime;
    use std::sync::mpsc;
    use std::time::Duration;

    /// Both workers of a 2-worker runtime run a blocking closure that waits for a message only a
    /// third task sends: it can be sent only if the runtime still runs tasks while both block.
    /// Without `off_runtime` the closures wait out their 20 s and the test fails; with it, the
    /// message comes at once, however loaded the machine.
    #[test]
    fn tasks_keep_running_while_every_worker_blocks() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let heard = runtime.block_on(async {
            let (tx_a, rx_a) = mpsc::channel::<()>();
            let (tx_b, rx_b) = mpsc::channel::<()>();
            let wait = |rx: mpsc::Receiver<()>| {
                tokio::spawn(async move {
                    off_runtime(move || rx.recv_timeout(Duration::from_secs(20)).is_ok())
                })
            };
            let (a, b) = (wait(rx_a), wait(rx_b));
            // Let both blocking closures take their worker before the sender is spawned.
            tokio::time::sleep(Duration::from_millis(50)).await;
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(10)).await;
                let _ = tx_a.send(());
                let _ = tx_b.send(());
            });
            (a.await.unwrap(), b.await.unwrap())
        });
        assert_eq!(heard, (true, true));
    }

    #[test]
    fn blocking_work_inside_blocking_work_just_runs() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let n = runtime.block_on(async {
            tokio::spawn(async { off_runtime(|| off_runtime(|| 9)) })
                .await
                .unwrap()
        });
        assert_eq!(n, 9);
    }

    #[test]
    fn outside_a_runtime_it_just_runs() {
        assert_eq!(off_runtime(|| 7), 7);
        let current = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        assert_eq!(current.block_on(async { off_runtime(|| 8) }), 8);
    }
}
