//! The server side of every SQL lock, whatever its database: where the server is (its
//! proxy), which lock, how patiently to ask, and the session settings of the `[client]`
//! table. Made once per run and shared by every session of the run; the database's own
//! part (connecting, the schema, error mapping) is in `pg_node.rs` and `mysql_node.rs`.

use crate::vocab::{LockSpec, MsRange};
use serde::de::DeserializeOwned;
use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::sync::OnceCell;

/// A database the SQL locks run on: its server kinds and its session settings.
pub trait Dialect: fmt::Debug + Send + Sync + 'static {
    /// The `[client]` options: server timeouts a session sets for itself.
    type Settings: DeserializeOwned + Default + Clone + fmt::Debug + Send + Sync + 'static;
    /// The server kinds, by name.
    const SERVERS: &'static [&'static str];
}

/// One run's server of a SQL lock.
#[derive(Debug)]
pub struct SqlNode<D: Dialect> {
    pub(crate) addr: SocketAddr,
    pub(crate) lock: String,
    pub(crate) op_timeout: Duration,
    pub(crate) retry_delay: MsRange,
    pub(crate) settings: D::Settings,
    /// Set once the lock's tables and row exist: the first session of a run makes them
    /// (Jepsen's client setup), the others find them.
    pub(crate) schema: OnceCell<()>,
}

impl<D: Dialect> SqlNode<D> {
    /// The server at `addr`, for the lock `lock`.
    pub fn new(
        addr: SocketAddr,
        lock: &str,
        op_timeout_ms: u64,
        retry_delay: MsRange,
        settings: &D::Settings,
    ) -> SqlNode<D> {
        SqlNode {
            addr,
            lock: lock.to_owned(),
            op_timeout: Duration::from_millis(op_timeout_ms),
            retry_delay,
            settings: settings.clone(),
            schema: OnceCell::new(),
        }
    }

    /// The node of one run: the server at `addr`, the lock's name and timeouts.
    pub(crate) fn for_run(addr: SocketAddr, lock: &LockSpec, settings: &D::Settings) -> Self {
        SqlNode::new(
            addr,
            &lock.name,
            lock.op_timeout_ms,
            lock.retry_delay_ms,
            settings,
        )
    }
}
