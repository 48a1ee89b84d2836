//! Lock clients: the lock implementations under test (built in, or an adapter process that
//! speaks the client protocol) and the loop every client process runs.

mod broken;
mod driver;
mod etcd_lock;
mod etcd_lock_service;
mod kind;
mod kinds;
mod lock;
mod pause;
mod pause_gate;
pub mod process;
mod redis_error;
mod redis_lock;
mod redis_naive;
mod redis_node;
mod redis_scripts;
mod redis_sentinel;
mod redlock;
pub mod redlock_validity;
mod retry;
mod watchdog;
mod zk_lock;

pub use broken::Broken;
pub use driver::{run_client, ClientCtx};
pub use etcd_lock::EtcdLock;
pub use kind::{BuildCtx, ClientKind, ClientOptions, Clients, NoOptions, Plain, Runs, SINGLE_NODE};
pub use kinds::{client_names, find_client, CLIENTS};
pub use lock::{Connecting, Grant, LockClient, LockSession, Outcome};
pub use pause::{Interrupt, PauseHook, PausePlan, PausePoints};
pub(crate) use redis_error::{connect as connect_redis, request as redis_request};
pub use redis_lock::RedisLock;
pub use redis_naive::RedisNaiveLock;
pub use redis_sentinel::{SentinelLock, SentinelSession, WaitSpec};
pub use redlock::{NodeAnswer, Redlock, RedlockSession};
pub use zk_lock::ZkLock;
