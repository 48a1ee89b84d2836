//! The lock-safety checker: double holders, stale fencing-token writes, lost counter updates
//! and deadlocks, each in its own file, combined into a [`LockReport`] by [`check_locks`]; and
//! linearizability of the lock operations against a lock model.

mod check;
mod deadlock;
mod double_holder;
mod holding;
mod linearizable;
mod lost_update;
mod ops;
mod params;
mod report;
mod stale_write;

pub use check::check_locks;
pub use linearizable::{check_lock_linearizability, lock_model_for};
pub use params::{LockCheckParams, Property};
pub use report::{Finding, FindingKind, LockReport, LockStats, TimeWindow, MAX_LISTED};
