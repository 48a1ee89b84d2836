//! Talking to one node over its own protocol, below every role that does (the servers'
//! readiness checks, the lock recipes, the protected resource): a request with a time limit
//! and its error read as a Jepsen outcome.

pub mod redis;
