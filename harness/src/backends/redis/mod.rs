//! Redis: single masters (one, or five for Redlock), a master with replicas watched by
//! sentinels, and the locks lockpick builds on them (SET NX PX with a token, the naive lock,
//! Redlock, the sentinel-discovered lock).

mod lock;
mod naive;
mod node;
mod process;
mod redlock;
pub mod redlock_validity;
mod replicas;
mod reset;
mod scripts;
mod sentinel_lock;
mod sentinel_process;
mod sentinel_server;
mod sentinel_watch;
mod server;
mod watch;

pub use lock::RedisLock;
pub use naive::RedisNaiveLock;
pub use process::{redis_ping, RedisOptions};
pub use redlock::{NodeAnswer, Redlock, RedlockSession};
pub use replicas::start_redis_replicas;
pub use sentinel_lock::{SentinelLock, SentinelSession, WaitSpec};
pub use sentinel_process::SentinelOptions;
pub use sentinel_server::SENTINEL_MASTER;

/// The Redis backend's entry in the registry.
pub static BACKEND: super::Backend = super::Backend {
    servers: &[&server::Redis, &sentinel_server::RedisSentinel],
    clients: &[
        &lock::KIND,
        &naive::KIND,
        &redlock::KIND,
        &sentinel_lock::KIND,
    ],
    packages: &[process::PACKAGE, sentinel_process::PACKAGE],
};
