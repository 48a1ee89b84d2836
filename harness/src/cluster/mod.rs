//! Member-to-member networking of a local cluster (etcd, ZooKeeper, a Redis master with its
//! replicas and sentinels): every peer link runs through a fault proxy of its own, so that
//! lockpick can cut one member off from the others.

pub(crate) mod error;
pub(crate) mod net;
mod owner;
mod router;
pub(crate) mod start;

pub use error::ClusterError;
pub use net::{link_proxy, ClusterNet, MemberPorts, Routing};
pub use start::Cluster;
