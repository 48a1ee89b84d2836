//! Lock clients: the lock implementations under test and the loop every client process runs.

mod driver;
mod etcd_lock;
mod lock;
mod pause;
mod pause_gate;
mod pg_advisory;
mod pg_for_update;
mod pg_lease_row;
mod pg_node;
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

pub use driver::{run_client, ClientCtx};
pub use etcd_lock::EtcdLock;
pub use lock::{Grant, LockClient, LockSession, Outcome};
pub use pause::{Interrupt, PausePlan, PausePoints};
pub use pg_advisory::{PgAdvisoryLock, PgAdvisorySession};
pub use pg_for_update::{PgForUpdateLock, PgForUpdateSession};
pub use pg_lease_row::{PgLeaseRowLock, PgLeaseRowSession};
pub use pg_node::prepare_schema as prepare_pg_schema;
pub(crate) use redis_error::{connect as connect_redis, request as redis_request};
pub use redis_lock::RedisLock;
pub use redis_naive::RedisNaiveLock;
pub use redis_sentinel::{SentinelLock, SentinelSession};
pub use redlock::{NodeAnswer, Redlock, RedlockSession};
pub use zk_lock::ZkLock;
