//! Member-to-member networking of a local cluster: every peer link runs through a fault
//! proxy of its own, so that lockpick can cut one member off from the others.

mod error;
mod net;
mod owner;
mod router;

pub use error::ClusterError;
pub use net::{link_proxy, ClusterNet, MemberPorts};
