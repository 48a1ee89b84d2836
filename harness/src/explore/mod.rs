//! `lockpick explore`: a randomized search for a fault schedule that breaks a lock, and the
//! shrinking of what it finds into a small scenario file that reproduces it.
//!
//! The search is apart from running: [`draw`] is the seeded distribution of schedules,
//! [`shrink`] the reductions of a schedule that broke the lock, [`classify`] what a run found;
//! [`workload`] the workload shapes drawn beside the faults; `choose` which finds and
//! confirmations the search keeps; all five are pure. [`search`] runs them as ordinary stored runs ([`crate::run::run_plan`]).

pub mod base;
mod choose;
pub mod classify;
pub mod draw;
mod repeat;
mod runs;
pub mod search;
pub mod shrink;
pub mod workload;

pub use base::{Base, LeftOut};
pub use classify::Found;
pub use draw::{Drawn, DrawnExt, Schedule, ScheduleExt, Space};
pub use lockpick_store::explore::{ExploreRecord, Phase, ShrinkStep, Shrunk, Try, Workload};
pub use search::{explore, Config, Exploration, ExploreError};
pub use shrink::Need;
