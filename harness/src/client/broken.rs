//! The first client that broke the harness (an adapter that broke the client protocol or
//! cannot start): the run stops with its error instead of reaching a verdict.

use super::adapter_error::AdapterError;
use std::sync::Mutex;
use tokio_util::sync::CancellationToken;

/// Shared by every client loop of a run and the runner.
#[derive(Debug, Default)]
pub struct Broken {
    first: Mutex<Option<AdapterError>>,
    reported: CancellationToken,
}

impl Broken {
    /// Keeps `error` if it is the first, and wakes the runner.
    pub fn report(&self, error: AdapterError) {
        self.first
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(error);
        self.reported.cancel();
    }

    /// Resolves once a client reported an error.
    pub async fn reported(&self) {
        self.reported.cancelled().await;
    }

    /// The first error reported, if any.
    pub fn take(&self) -> Option<AdapterError> {
        self.first.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}
