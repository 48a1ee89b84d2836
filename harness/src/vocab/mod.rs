//! The words every role shares — durations, lock and workload parameters, where a client
//! stops, scenario errors and limits — kept apart so that servers, clients, faults and the
//! nemesis can use them without importing the scenario loader above them. A leaf: it imports
//! no other module of this crate.

mod client_table;
mod discipline;
mod error;
mod lock;
mod ms;
mod outcome;
mod pause_point;
mod persistence;
pub mod rules;
mod workload;

pub use client_table::ClientTable;
pub use discipline::Discipline;
pub(crate) use error::{in_range, Source};
pub use error::{Located, ScenarioError};
pub use lock::{lock_names_of, LockSpec};
pub use ms::MsRange;
pub use outcome::Outcome;
pub use pause_point::{PausePoint, RequestOps};
pub use persistence::Persistence;
pub use workload::{ResourceMode, WorkloadKind, WorkloadSpec};
