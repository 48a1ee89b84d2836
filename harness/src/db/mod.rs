//! Local backend supervisor: starts database servers as child processes of lockpick, pauses,
//! resumes, kills and restarts them, and makes sure none outlives the run.

mod child;
mod error;
pub mod faketime;
mod folder;
mod kind;
mod launch;
mod node;
mod ports;
mod preflight;
mod redis;
mod registry;
mod sentinel;
mod spawner;
mod supervisor;

pub use error::DbError;
pub use kind::NodeKind;
pub use node::{NodeInfo, NodeState};
pub use redis::{redis_ping, RedisOptions};
pub use registry::kill_all_children;
pub use sentinel::SentinelOptions;
pub use supervisor::Supervisor;
