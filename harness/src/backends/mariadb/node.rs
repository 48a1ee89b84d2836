//! What the MariaDB/MySQL locks share: the server reached through its proxy, one dedicated
//! connection per session, the schema made once per run, and how driver errors map to Jepsen
//! outcomes.

use crate::backends::sql::node::{Dialect, SqlNode};
use crate::client::lock::Outcome;
use crate::client::retry::try_until;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, OptsBuilder, Statement};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::de::IgnoredAny;
use serde::Deserialize;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// The database lockpick's tables live in.
pub(super) const DATABASE: &str = "lockpick";
/// One row per lock, held with `SELECT … FOR UPDATE`.
pub(super) const ROW_TABLE: &str = "lockpick_locks";
/// Lease rows, inserted to take a lock: the auto-increment id is the fencing token.
pub(super) const LEASE_TABLE: &str = "lockpick_leases";
/// The sequence `GET_LOCK` takes its fencing token from.
pub(super) const TOKEN_SEQUENCE: &str = "lockpick_token";
/// ER_DUP_ENTRY: the lease row exists, someone else holds the lock.
pub(super) const DUPLICATE_KEY: u16 = 1062;
/// ER_LOCK_WAIT_TIMEOUT, also what `NOWAIT` answers on a locked row.
pub(super) const LOCK_WAIT_TIMEOUT: u16 = 1205;

/// MariaDB: the server kind its locks run on and their session settings.
#[derive(Debug)]
pub struct My;

impl Dialect for My {
    type Settings = MySettings;
    const SERVERS: &'static [&'static str] = &["mariadb"];
}

/// A MariaDB server of one run, shared by every session of its locks.
pub type MyNode = SqlNode<My>;

/// The `[client]` options every MariaDB lock has: the server timeout a session sets for
/// itself, which decides when the server gives up on a silent holder (and so frees its
/// named lock or row lock).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MySettings {
    #[serde(default)]
    /// The `[client]` kind, read by the scenario loader.
    pub kind: IgnoredAny,
    /// The client's discipline, read by the scenario loader.
    #[serde(default)]
    pub discipline: IgnoredAny,
    /// `wait_timeout`: the server closes a connection idle this long (whole seconds; the
    /// server's default is 8 hours).
    #[serde(
        default,
        deserialize_with = "crate::backends::sql::limits::mariadb_wait_timeout"
    )]
    pub wait_timeout_s: Option<u64>,
}

/// One process's connection and its prepared statements. Clones share the connection; its
/// requests run one at a time, as on a real connection.
#[derive(Clone)]
pub(super) struct MyConn {
    pub(super) node: Arc<MyNode>,
    pub(super) conn: Arc<Mutex<Conn>>,
    pub(super) statements: Arc<Vec<Statement>>,
    rng: ChaCha8Rng,
}

impl MyConn {
    /// Connects (within the op timeout) and prepares `sql`; `seed` seeds the retry delays.
    pub(super) async fn open(node: Arc<MyNode>, seed: u64, sql: &[&str]) -> Result<MyConn, String> {
        node.schema
            .get_or_try_init(|| prepare_schema(node.addr, &node.lock, node.op_timeout))
            .await?;
        let setup: Vec<String> = node
            .settings
            .wait_timeout_s
            .map(|s| format!("SET SESSION wait_timeout = {s}"))
            .into_iter()
            .collect();
        let mut conn = connect_to(node.addr, node.op_timeout, true, setup).await?;
        let mut statements = Vec::new();
        for text in sql {
            match request(node.op_timeout, conn.prep(*text)).await {
                Outcome::Ok(statement) => statements.push(statement),
                Outcome::Fail(e) | Outcome::Info(e) => {
                    return Err(format!("prepare on {}: {e}", node.addr))
                }
            }
        }
        Ok(MyConn {
            node,
            conn: Arc::new(Mutex::new(conn)),
            statements: Arc::new(statements),
            rng: ChaCha8Rng::seed_from_u64(seed),
        })
    }

    /// Runs `attempt` until it takes the lock, with the node's retry delays: see [`try_until`].
    pub(super) async fn poll<T, Fut>(
        &mut self,
        deadline: Instant,
        mut attempt: impl FnMut(MyConn) -> Fut,
    ) -> Outcome<T>
    where
        Fut: Future<Output = Outcome<Option<T>>>,
    {
        let delay = self.node.retry_delay;
        let me = self.clone();
        try_until(deadline, delay, &mut self.rng, || attempt(me.clone())).await
    }
}

/// Opens a connection to `addr` (TCP only: the driver would otherwise switch to the server's
/// unix socket and go around the proxy), using the lockpick database when `database`.
pub(super) async fn connect_to(
    addr: SocketAddr,
    limit: Duration,
    database: bool,
    setup: Vec<String>,
) -> Result<Conn, String> {
    let opts = OptsBuilder::default()
        .init(setup)
        .ip_or_hostname(addr.ip().to_string())
        .tcp_port(addr.port())
        .user(Some("root"))
        .db_name(database.then_some(DATABASE))
        .prefer_socket(false);
    match tokio::time::timeout(limit, Conn::new(opts)).await {
        Ok(Ok(conn)) => Ok(conn),
        Ok(Err(e)) => Err(format!("connect to {addr}: {e}")),
        Err(_) => Err(format!("connect to {addr}: timeout")),
    }
}

/// Runs one request with a time limit and classifies what went wrong: an error the server
/// sent means the statement did not take effect (`fail`, with its error code); a timeout or
/// a broken connection leaves it unknown (`info`).
pub(super) async fn request<T>(
    limit: Duration,
    fut: impl Future<Output = mysql_async::Result<T>>,
) -> Outcome<T> {
    match tokio::time::timeout(limit, fut).await {
        Err(_) => Outcome::Info("timeout".to_owned()),
        Ok(Ok(v)) => Outcome::Ok(v),
        Ok(Err(mysql_async::Error::Server(e))) => {
            Outcome::Fail(format!("{}: {}", e.code, e.message))
        }
        Ok(Err(e)) => Outcome::Info(format!("connection: {e}")),
    }
}

/// The server's error code in a `Fail` made by [`request`].
pub(super) fn code(reason: &str) -> Option<u16> {
    reason.split(':').next()?.parse().ok()
}

/// Makes the database, the row and lease tables with a row for `lock`, and the token
/// sequence; idempotent.
async fn prepare_schema(addr: SocketAddr, lock: &str, limit: Duration) -> Result<(), String> {
    let mut conn = connect_to(addr, limit, false, Vec::new()).await?;
    let setup = format!(
        "CREATE DATABASE IF NOT EXISTS {DATABASE}; USE {DATABASE}; \
         CREATE TABLE IF NOT EXISTS {ROW_TABLE} (name varchar(128) PRIMARY KEY) ENGINE=InnoDB; \
         CREATE TABLE IF NOT EXISTS {LEASE_TABLE} (id bigint AUTO_INCREMENT PRIMARY KEY, \
           name varchar(128) NOT NULL UNIQUE, holder varchar(128) NOT NULL, \
           expires_at datetime(6) NOT NULL) ENGINE=InnoDB; \
         CREATE SEQUENCE IF NOT EXISTS {TOKEN_SEQUENCE}"
    );
    let insert = format!("INSERT IGNORE INTO {ROW_TABLE} (name) VALUES (?)");
    let mut outcome = request(limit, conn.query_drop(setup)).await;
    if let Outcome::Ok(()) = outcome {
        outcome = request(limit, conn.exec_drop(insert, (lock,))).await;
    }
    let _ = conn.disconnect().await;
    match outcome {
        Outcome::Ok(()) => Ok(()),
        Outcome::Fail(e) | Outcome::Info(e) => {
            Err(format!("prepare the lock tables on {addr}: {e}"))
        }
    }
}
