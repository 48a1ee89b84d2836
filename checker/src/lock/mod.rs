//! The lock-safety checker: double holders, stale fencing-token writes, lost counter updates,
//! deadlocks and lockouts, found in one streaming pass ([`LockStream`]) and combined into a
//! [`LockReport`]; the server's own record set beside the holders' beliefs, when a run has
//! one ([`ServerView`]); and linearizability of the lock operations against a lock model.

mod check;
mod kept_ops;
mod lin_check;
mod lin_stream;
mod lin_summary;
mod lock_linearizability;
mod lock_ops;
pub mod notices;
#[cfg(test)]
mod oracle;
mod params;
mod report;
mod server_view;
mod stream;

pub use check::{check_locks, check_locks_with_server};
pub use lin_summary::LinSummary;
pub use lock_linearizability::{check_lock_linearizability, lock_model_for};
pub use lock_ops::{LockOps, Recheck};
pub use notices::Learned;
pub use params::{LockCheckParams, Property};
pub use report::{
    Finding, FindingClass, FindingKind, KindCount, LockCounts, LockReport, LockStats, TimeWindow,
    MAX_LISTED, PRINTED_PER_KIND,
};
pub use server_view::{
    LockServerView, Ownership, RecordEnd, ServerView, MAX_RECORDS, SILENCE_TOLERANCE_NS,
    WATCH_LAG_NS,
};
pub use stream::LockStream;
