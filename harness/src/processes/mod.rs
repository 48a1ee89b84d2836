//! Local backend supervisor: starts database servers as child processes of lockpick, pauses,
//! resumes, kills and restarts them, and makes sure none outlives the run.

mod child;
pub mod cpu;
mod error;
pub mod faketime;
pub(crate) mod folder;
pub(crate) mod http;
pub(crate) mod kind;
mod launch;
mod node;
pub(crate) mod pid_namespace;
pub(crate) mod ports;
mod preflight;
mod registry;
pub(crate) mod run_as;
mod spawner;
mod supervisor;

pub(crate) use child::Child;
pub use error::ProcessError;
pub use kind::NodeKind;
pub use node::{NodeInfo, NodeState};
pub use ports::{reserve_port, ReservedPort};
pub(crate) use preflight::find_binary;
pub(crate) use registry::signal_known as signal_child_known;
pub use registry::{descendants, kill_all_children, live_children};
pub use run_as::SERVER_USER;
pub(crate) use spawner::{spawn_piped, SpawnFailure, Spawned};
pub use supervisor::{MemberSpec, Supervisor};
