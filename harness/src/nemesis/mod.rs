//! The nemesis: a fault schedule drawn from the seed, and its execution against proxies and
//! clients. What each fault does is its module's, under `crate::fault`.

mod error;
mod execute;
mod schedule;

pub use crate::fault::Step;
pub use error::NemesisError;
pub use execute::{run_nemesis, NemesisCtx};
pub use schedule::{build_schedule, check_schedule_size, max_steps};
