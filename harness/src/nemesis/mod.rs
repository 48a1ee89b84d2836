//! The nemesis: a fault schedule drawn from the seed, and its execution against proxies and
//! clients.

mod execute;
mod schedule;

pub use execute::{run_nemesis, NemesisCtx};
pub use schedule::{build_schedule, Action, Step};
