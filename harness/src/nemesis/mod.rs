//! The nemesis: a fault schedule drawn from the seed, and its execution against proxies and
//! clients. What each fault does is its module's, under `crate::fault`.

mod execute;
mod schedule;

#[cfg(test)]
mod recorded_verbs;
#[cfg(test)]
mod step_bounds;

pub use crate::fault::Step;
// What faults act on and how they fail live with the faults; kept here too, where the runner
// has always found them.
pub use crate::fault::{check_schedule_size, max_steps, NemesisCtx, NemesisError};
pub use execute::run_nemesis;
pub use schedule::{build_schedule, build_soak_schedule};
