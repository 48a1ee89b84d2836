//! `lockpick explore`: a randomized search for a fault schedule that breaks a lock, and the
//! shrinking of what it finds into a small scenario file that reproduces it.
//!
//! The search is apart from running: [`draw`] is the seeded distribution of schedules,
//! [`shrink`] the reductions of a schedule that broke the lock, [`classify`] what a run found;
//! all three are pure. [`search`] runs them as ordinary stored runs ([`crate::run::run_plan`]).

pub mod base;
pub mod classify;
pub mod draw;
pub mod search;
pub mod shrink;

pub use base::{Base, LeftOut};
pub use classify::Found;
pub use draw::{Drawn, Schedule, Space};
pub use search::{explore, Config, Exploration, ExploreError, Phase, ShrinkStep, Shrunk, Try};
pub use shrink::Need;
