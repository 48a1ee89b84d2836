//! ZooKeeper: an ensemble (3 servers by default) whose quorum and election links run through
//! lockpick's proxies, and the lock recipe on it (sequential ephemeral nodes).

mod cluster;
mod lock;
mod process;
mod reset;
mod server;
mod settle;
mod watch;

pub use cluster::{start_zk_cluster, start_zk_cluster_of, ZkCluster};
pub use lock::ZkLock;
pub use process::ZK_TICK_MS;
pub use process::{zk_is_leader, zk_mode, zk_version, ZkOptions, ZkPeer};

/// The ZooKeeper backend's entry in the registry.
pub static BACKEND: super::Backend = super::Backend {
    servers: &[&server::ZooKeeper],
    clients: &[&lock::KIND],
    packages: &[process::PACKAGE],
};
