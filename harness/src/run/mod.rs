//! One run of a scenario: start the backend, wire proxies, run clients and nemesis, record,
//! tear down, check.

mod backend;
mod error;
mod external;
mod options;
mod plan;
mod progress;
mod runner;
mod servers;
mod soak;
mod stall;
mod store;

pub use error::RunError;
pub use options::RunOptions;
pub use plan::{RunPlan, Swapped};
pub use runner::{run_plan, run_plan_in, run_scenario, run_scenario_in, RunOutcome};
pub use servers::{ServerPool, Setup};
pub use store::{
    create_run_dir, mark_runs_killed, note_interrupt, relative_run, utc_stamp, STOP_AT_ENV,
};
