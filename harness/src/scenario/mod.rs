//! Scenario files: what a run starts, how clients behave, which faults to inject, and the
//! verdict it is expected to reach.

mod client_table;
mod error;
mod file;
mod load;
mod model;
mod ms;
mod overrides;
pub mod rules;

pub use client_table::ClientTable;
pub use error::ScenarioError;
pub(crate) use error::Source;
pub use load::{find_scenario, list_scenarios, load_scenario, parse_scenario, ScenarioEntry};
pub use model::{
    lock_names_of, node_rule, ClientSpec, Fault, LockSpec, Nemesis, PausePoint, Persistence,
    Property, ResourceMode, Scenario, SkippedFault, Targets, WorkloadKind, WorkloadSpec,
    ZK_TICK_MS,
};
pub use ms::MsRange;
pub use overrides::check_overrides;
