//! Runs lock clients against real backends behind fault proxies, injects faults and records
//! the history.

pub mod proxy;
