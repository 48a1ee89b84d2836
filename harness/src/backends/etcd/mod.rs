//! etcd: a cluster of members (3 by default) whose peer links run through lockpick's proxies,
//! and the two locks lockpick builds on it (a lease with a key per waiter, as etcd's own
//! `concurrency.Mutex`; and the v3lock service).

mod cluster;
mod lock;
mod lock_service;
mod process;
mod reset;
mod server;
mod settle;
mod watch;

pub use cluster::{start_etcd_cluster, start_etcd_cluster_of, EtcdCluster};
pub use lock::EtcdLock;
pub use process::{etcd_health, etcd_is_leader, etcd_version, EtcdOptions};

/// The etcd backend's entry in the registry.
pub static BACKEND: super::Backend = super::Backend {
    servers: &[&server::Etcd],
    clients: &[&lock::KIND, &lock_service::KIND],
    packages: &[process::PACKAGE],
};
