//! What the PostgreSQL locks share: the server reached through its proxy, one dedicated
//! connection per session (the session *is* the lock for advisory and row locks), the schema
//! made once per run, and how driver errors map to Jepsen outcomes.

use super::lock::Outcome;
use super::retry::try_until;
use crate::db::{PG_DATABASE, PG_USER};
use crate::scenario::MsRange;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_postgres::{Client, Statement};

/// The lease table: one row per lock, made by [`prepare_schema`] before the clients start.
pub(super) const TABLE: &str = "lockpick_locks";
/// The sequence the advisory lock takes its fencing token from.
pub(super) const TOKEN_SEQUENCE: &str = "lockpick_token";

/// Where the server is, which lock, and how patiently to ask.
#[derive(Debug, Clone)]
pub(super) struct PgNode {
    pub(super) addr: SocketAddr,
    pub(super) lock: String,
    pub(super) op_timeout: Duration,
    pub(super) retry_delay: MsRange,
}

impl PgNode {
    pub(super) fn new(
        addr: SocketAddr,
        lock: &str,
        op_timeout_ms: u64,
        retry_delay: MsRange,
    ) -> PgNode {
        PgNode {
            addr,
            lock: lock.to_owned(),
            op_timeout: Duration::from_millis(op_timeout_ms),
            retry_delay,
        }
    }
}

/// One process's connection and its prepared statements. Clones share the connection.
#[derive(Clone)]
pub(super) struct PgConn {
    pub(super) node: Arc<PgNode>,
    pub(super) client: Arc<Client>,
    /// Statements prepared at connect, in the order the lock asked for them.
    pub(super) statements: Arc<Vec<Statement>>,
    rng: ChaCha8Rng,
}

impl PgConn {
    /// Connects (within the op timeout) and prepares `sql`; `seed` seeds the retry delays.
    pub(super) async fn open(node: Arc<PgNode>, seed: u64, sql: &[&str]) -> Result<PgConn, String> {
        let client = connect(node.addr, node.op_timeout).await?;
        let mut statements = Vec::new();
        for text in sql {
            match request(node.op_timeout, client.prepare(text)).await {
                Outcome::Ok(statement) => statements.push(statement),
                Outcome::Fail(e) | Outcome::Info(e) => {
                    return Err(format!("prepare on {}: {e}", node.addr))
                }
            }
        }
        Ok(PgConn {
            node,
            client: Arc::new(client),
            statements: Arc::new(statements),
            rng: ChaCha8Rng::seed_from_u64(seed),
        })
    }

    /// Runs `attempt` until it takes the lock, with the node's retry delays: see [`try_until`].
    pub(super) async fn poll<T, Fut>(
        &mut self,
        deadline: Instant,
        mut attempt: impl FnMut(PgConn) -> Fut,
    ) -> Outcome<T>
    where
        Fut: Future<Output = Outcome<Option<T>>>,
    {
        let delay = self.node.retry_delay;
        let me = self.clone();
        try_until(deadline, delay, &mut self.rng, || attempt(me.clone())).await
    }
}

/// Opens a connection as lockpick's superuser, within `limit`; the connection's I/O runs on
/// its own task, which ends when the last handle on the client is dropped.
pub(crate) async fn connect(addr: SocketAddr, limit: Duration) -> Result<Client, String> {
    let mut config = tokio_postgres::Config::new();
    config
        .host(addr.ip().to_string())
        .port(addr.port())
        .user(PG_USER)
        .dbname(PG_DATABASE)
        .application_name("lockpick")
        .connect_timeout(limit);
    match tokio::time::timeout(limit, config.connect(tokio_postgres::NoTls)).await {
        Ok(Ok((client, connection))) => {
            tokio::spawn(connection);
            Ok(client)
        }
        Ok(Err(e)) => Err(format!("connect to {addr}: {e}")),
        Err(_) => Err(format!("connect to {addr}: timeout")),
    }
}

/// Runs one request with a time limit and classifies what went wrong: an error the server
/// sent means the statement did not take effect (`fail`, with its SQLSTATE); a timeout or a
/// connection that broke leaves it unknown (`info`): the statement may have run.
pub(super) async fn request<T>(
    limit: Duration,
    fut: impl Future<Output = Result<T, tokio_postgres::Error>>,
) -> Outcome<T> {
    match tokio::time::timeout(limit, fut).await {
        Err(_) => Outcome::Info("timeout".to_owned()),
        Ok(Ok(v)) => Outcome::Ok(v),
        Ok(Err(e)) => classify(&e),
    }
}

fn classify<T>(e: &tokio_postgres::Error) -> Outcome<T> {
    match e.as_db_error() {
        Some(db) => Outcome::Fail(format!("{}: {}", db.code().code(), db.message())),
        None if e.is_closed() => Outcome::Info("connection closed".to_owned()),
        None => Outcome::Info(format!("connection: {e}")),
    }
}

/// Makes the lease table with a free row for `lock`, and the token sequence; idempotent.
/// Run once, before the clients connect.
pub async fn prepare_schema(addr: SocketAddr, lock: &str, limit: Duration) -> Result<(), String> {
    let client = connect(addr, limit).await?;
    let sql = format!(
        "CREATE TABLE IF NOT EXISTS {TABLE} (name text PRIMARY KEY, holder text, \
         expires_at timestamptz, token bigint NOT NULL DEFAULT 0); \
         CREATE SEQUENCE IF NOT EXISTS {TOKEN_SEQUENCE};"
    );
    let insert = format!("INSERT INTO {TABLE} (name) VALUES ($1) ON CONFLICT DO NOTHING");
    let outcome = request(limit, client.batch_execute(&sql))
        .await
        .and_then(|()| Outcome::Ok(()));
    let outcome = match outcome {
        Outcome::Ok(()) => request(limit, client.execute(&insert, &[&lock]))
            .await
            .map(|_| ()),
        other => other,
    };
    match outcome {
        Outcome::Ok(()) => Ok(()),
        Outcome::Fail(e) | Outcome::Info(e) => {
            Err(format!("prepare the lock table on {addr}: {e}"))
        }
    }
}
