//! Hazelcast: members (3 by default) whose member links run through lockpick's proxies, with
//! the CP Subsystem on (`hazelcast`: FencedLock is a Raft lock with a fence) or off
//! (`hazelcast-unsafe`: Hazelcast's "unsafe mode", the same API on the AP partitions). The
//! lock itself is taken by a Java adapter (clients/java/hazelcast); nothing is built in here.

mod cluster;
mod process;
mod reset;
mod server;

pub use process::SESSION_TTL_S;

/// The Hazelcast backend's entry in the registry. Its members run on the JDK and the jar
/// scripts/setup fetches from Maven Central, no Debian package of their own.
pub static BACKEND: super::Backend = super::Backend {
    servers: &[&server::CP, &server::UNSAFE],
    clients: &[],
    packages: &[],
};
