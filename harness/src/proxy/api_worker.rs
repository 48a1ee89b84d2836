//! The one thread that owns the blocking Toxiproxy client of a [`super::FaultProxies`].
//!
//! Making a `toxiproxy_rust` client (a reqwest blocking client with its own runtime thread)
//! costs ~100 ms on this machine, while a request through a live one takes ~1 ms; a fresh
//! client per call made every fault land late. The client is blocking and must never run or
//! be dropped on an async thread, so it lives on a thread of its own and calls queue to it.

use std::net::SocketAddr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use tokio::sync::oneshot;
use toxiproxy_rust::client::Client;

type Job = Box<dyn FnOnce(&Client) -> bool + Send>;

/// Sends jobs to the client thread; the thread ends (dropping the client there) when the last
/// clone of this is dropped.
#[derive(Debug)]
pub(crate) struct ApiWorker {
    jobs: mpsc::Sender<Job>,
}

impl ApiWorker {
    /// Starts the thread. The client contacts nobody until the first job.
    pub(crate) fn start(api: SocketAddr) -> std::io::Result<ApiWorker> {
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name(format!("toxiproxy-client-{api}"))
            .spawn(move || {
                let mut client = Client::new(api);
                while let Ok(job) = queue.recv() {
                    // A job that panicked may have poisoned the client's lock: start afresh.
                    if !job(&client) {
                        client = Client::new(api);
                    }
                }
            })?;
        Ok(ApiWorker { jobs })
    }

    /// Runs `f` on the client thread and waits for it without blocking the async thread.
    /// `Err` carries the panic message when `f` panicked (`toxiproxy_rust` panics when a toxic
    /// cannot be sent) or "client thread gone" if the thread has ended.
    pub(crate) async fn call<T, F>(&self, f: F) -> Result<T, String>
    where
        T: Send + 'static,
        F: FnOnce(&Client) -> T + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job: Job = Box::new(move |client| {
            let outcome = catch_unwind(AssertUnwindSafe(|| f(client))).map_err(panic_message);
            let fine = outcome.is_ok();
            let _ = reply.send(outcome);
            fine
        });
        self.jobs
            .send(job)
            .map_err(|_| "client thread gone".to_string())?;
        answer.await.map_err(|_| "client thread gone".to_string())?
    }
}

fn panic_message(panic: Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panicked".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panicking_call_is_reported_and_the_next_call_still_runs() {
        // Nothing listens on port 1: these calls never touch the network.
        let worker = ApiWorker::start(SocketAddr::from(([127, 0, 0, 1], 1))).unwrap();
        let err = worker
            .call(|_client| -> u32 { panic!("toxic could not be sent") })
            .await
            .unwrap_err();
        assert_eq!(err, "toxic could not be sent");
        assert_eq!(worker.call(|_client| 42).await, Ok(42));
    }

    #[tokio::test]
    async fn calls_run_one_after_another_on_one_thread() {
        let worker = ApiWorker::start(SocketAddr::from(([127, 0, 0, 1], 1))).unwrap();
        let a = worker.call(|_| std::thread::current().id()).await.unwrap();
        let b = worker.call(|_| std::thread::current().id()).await.unwrap();
        assert_eq!(a, b);
        assert_ne!(a, std::thread::current().id());
    }
}
