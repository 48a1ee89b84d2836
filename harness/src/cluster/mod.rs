//! Member-to-member networking of a local cluster (etcd, ZooKeeper, a Redis master with its
//! replicas and sentinels): every peer link runs through a fault proxy of its own, so that
//! lockpick can cut one member off from the others.

mod error;
mod etcd;
mod net;
mod owner;
mod redis;
mod router;
mod start;
mod zookeeper;

pub use error::ClusterError;
pub use etcd::{start_etcd_cluster, EtcdCluster};
pub use net::{link_proxy, ClusterNet, MemberPorts, Routing};
pub use redis::start_redis_replicas;
pub use start::Cluster;
pub use zookeeper::{start_zk_cluster, ZkCluster};
