//! Runs lock clients against real backends behind fault proxies, injects faults and records
//! the history.

pub mod addr;
pub mod backends;
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
