//! Local backend supervisor: starts database servers as child processes of lockpick, pauses,
//! resumes, kills and restarts them, and makes sure none outlives the run.

mod child;
mod error;
mod etcd;
pub mod faketime;
mod folder;
mod http;
mod kind;
mod launch;
mod mariadb;
mod node;
mod pid_namespace;
pub(crate) mod ports;
mod postgres;
mod preflight;
mod redis;
mod registry;
mod run_as;
mod sentinel;
mod spawner;
mod supervisor;
mod zookeeper;

pub(crate) use child::Child;
pub use error::DbError;
pub use etcd::{etcd_health, etcd_is_leader, EtcdOptions};
pub use kind::NodeKind;
pub use mariadb::{mariadb_ready, MariaDbOptions};
pub use node::{NodeInfo, NodeState};
pub use ports::{reserve_port, ReservedPort};
pub use postgres::replicas_streaming;
pub use postgres::{pg_ready, PgOptions, DATABASE as PG_DATABASE, USER as PG_USER};
pub use redis::{redis_ping, RedisOptions};
pub(crate) use registry::signal as signal_child;
pub use registry::{descendants, kill_all_children, live_children};
pub use run_as::SERVER_USER;
pub use sentinel::SentinelOptions;
pub(crate) use spawner::{spawn_piped, SpawnFailure, Spawned};
pub use supervisor::{MemberSpec, Supervisor};
pub use zookeeper::{zk_is_leader, zk_mode, ZkOptions, ZkPeer};
