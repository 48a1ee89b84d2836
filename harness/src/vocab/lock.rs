//! A run's lock parameters (`[lock]`), as every role reads them.

use super::ms::MsRange;
use serde::Serialize;

/// Lock parameters.
#[derive(Debug, Clone, Serialize)]
pub struct LockSpec {
    /// The lock's name; with [`LockSpec::count`] > 1, the stem of every lock's name.
    pub name: String,
    /// How many independent locks the clients share (`[workload] locks`); each operation
    /// picks one. Named by [`LockSpec::names`].
    pub count: usize,
    /// Lease length; ignored by locks without one (`redis-naive`).
    pub ttl_ms: u64,
    /// What frees the lock under a silent holder, when that is not `ttl_ms`: a server timeout
    /// of a lock without a lease (PostgreSQL's idle_session_timeout). Exposure measures the
    /// faults against it (docs/exposure.md); `None`: the TTL.
    pub lease_ms: Option<u64>,
    /// How long one acquire keeps retrying before it definitely fails.
    pub acquire_timeout_ms: u64,
    /// Pause between tries of one acquire.
    pub retry_delay_ms: MsRange,
    /// Time limit of one request to a node; past it the outcome is unknown.
    pub op_timeout_ms: u64,
    /// Renew the lease every ttl/3 while holding.
    pub watchdog: bool,
    /// The client's library renews the lock by itself (a session its heartbeats keep, a
    /// watchdog of its own), where the history does not show it: exposure counts a hold's
    /// lease from when its holder last could have renewed it (docs/exposure.md).
    pub renews: bool,
}

impl LockSpec {
    /// The names of the run's locks: the one `name`, or `name-0` … `name-(K-1)` for K locks
    /// (each is checked on its own, as Jepsen's independent keys are).
    pub fn names(&self) -> Vec<String> {
        lock_names_of(&self.name, self.count)
    }
}

/// The names [`LockSpec::names`] gives `count` locks named after `stem`.
pub fn lock_names_of(stem: &str, count: usize) -> Vec<String> {
    if count <= 1 {
        return vec![stem.to_owned()];
    }
    (0..count).map(|i| format!("{stem}-{i}")).collect()
}
