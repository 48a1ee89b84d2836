//! Scenario files: what a run starts, how clients behave, which faults to inject, and the
//! verdict it is expected to reach.

mod fault_entry;
mod file;
mod load;
mod model;
mod overrides;

// The shared words, where users of this crate have always found them.
pub use crate::backends::zookeeper::ZK_TICK_MS;
pub(crate) use crate::vocab::Source;
pub use crate::vocab::{
    lock_names_of, rules, ClientTable, LockSpec, MsRange, PausePoint, Persistence, ResourceMode,
    ScenarioError, WorkloadKind, WorkloadSpec,
};
pub(crate) use fault_entry::{check_fields, read_fault};
pub(crate) use file::{
    check, RawCheck, RawClientKind, RawLock, RawResource, RawScenario, RawServer, RawWorkload,
};
pub use load::{
    find_scenario, list_scenarios, load_scenario, parse_scenario, ScenarioEntry, SCENARIO_GROUPS,
};
pub use model::{node_rule, ClientSpec, Fault, Nemesis, Property, Scenario, SkippedFault, Targets};
pub use overrides::check_overrides;
