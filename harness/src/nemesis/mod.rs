//! The nemesis: a fault schedule drawn from the seed, and its execution against proxies and
//! clients.

mod error;
mod execute;
mod schedule;

pub use error::NemesisError;
pub use execute::{run_nemesis, NemesisCtx};
pub use schedule::{build_schedule, check_schedule_size, max_steps, Action, Members, Step};
