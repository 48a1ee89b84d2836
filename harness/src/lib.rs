//! Runs lock clients against real backends behind fault proxies, injects faults and records
//! the history.

/// This build as every record names it: the crate's version and the commit it was built from
/// (`0.1.0 (commit 0123456789ab)`, `+changes` when the tree differed from it; see build.rs).
pub const LOCKPICK_BUILD: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("LOCKPICK_COMMIT"),
    ")"
);

pub mod addr;
pub mod backends;
pub mod blocking;
pub mod client;
pub mod cluster;
pub mod explore;
pub mod fault;
pub mod locks;
pub mod matrix;
pub mod matrix_run;
pub mod nemesis;
pub mod processes;
pub mod proxy;
pub mod recorder;
pub mod resource;
pub mod run;
pub mod scenario;
pub mod server;
pub mod vocab;
pub mod wire;
