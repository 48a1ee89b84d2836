//! What the PostgreSQL locks share: the server reached through its proxy, one dedicated
//! connection per session (the session *is* the lock for advisory and row locks), the schema
//! made once per run, and how driver errors map to Jepsen outcomes.

use crate::backends::postgres::{PG_DATABASE, PG_USER};
use crate::backends::sql::node::{Dialect, SqlNode};
use crate::client::lock::Outcome;
use crate::client::retry::try_until;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::de::IgnoredAny;
use serde::Deserialize;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_postgres::{Client, Statement};

/// The lease table: one row per lock, made by [`prepare_schema`] before the clients start.
pub(super) const TABLE: &str = "lockpick_locks";
/// The sequence the advisory lock takes its fencing token from.
pub(super) const TOKEN_SEQUENCE: &str = "lockpick_token";

/// PostgreSQL: the server kind its locks run on and their session settings.
#[derive(Debug)]
pub struct Pg;

impl Dialect for Pg {
    type Settings = PgSettings;
    const SERVERS: &'static [&'static str] = &[
        "postgres",
        "postgres-async-replica",
        "postgres-sync-replica",
    ];
}

/// A PostgreSQL server of one run, shared by every session of its locks.
pub type PgNode = SqlNode<Pg>;

/// The `[client]` options every PostgreSQL lock has: server timeouts a session sets for
/// itself, which decide when the server gives up on a silent holder (and so frees its
/// advisory lock or row lock).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PgSettings {
    #[serde(default)]
    /// The `[client]` kind, read by the scenario loader.
    pub kind: IgnoredAny,
    /// The client's discipline, read by the scenario loader.
    #[serde(default)]
    pub discipline: IgnoredAny,
    /// `idle_session_timeout`: the server closes a session idle (outside a transaction) this
    /// long. 0 or absent: never (the server's default).
    #[serde(default, deserialize_with = "crate::backends::sql::limits::pg_int")]
    pub idle_session_timeout_ms: Option<u64>,
    /// `idle_in_transaction_session_timeout`: the same inside an open transaction.
    #[serde(default, deserialize_with = "crate::backends::sql::limits::pg_int")]
    pub idle_in_transaction_session_timeout_ms: Option<u64>,
    /// `tcp_keepalives_idle`, `_interval`, `_count`: when the server probes a silent client.
    /// Through a proxy the probes are answered by the proxy's socket, so they only end a
    /// session whose proxy connection is gone.
    #[serde(default, deserialize_with = "crate::backends::sql::limits::pg_int")]
    pub tcp_keepalives_idle_s: Option<u64>,
    #[serde(default, deserialize_with = "crate::backends::sql::limits::pg_int")]
    pub tcp_keepalives_interval_s: Option<u64>,
    #[serde(default, deserialize_with = "crate::backends::sql::limits::pg_int")]
    pub tcp_keepalives_count: Option<u64>,
}

impl PgSettings {
    fn pairs(&self) -> Vec<(String, String)> {
        [
            ("idle_session_timeout", self.idle_session_timeout_ms),
            (
                "idle_in_transaction_session_timeout",
                self.idle_in_transaction_session_timeout_ms,
            ),
            ("tcp_keepalives_idle", self.tcp_keepalives_idle_s),
            ("tcp_keepalives_interval", self.tcp_keepalives_interval_s),
            ("tcp_keepalives_count", self.tcp_keepalives_count),
        ]
        .into_iter()
        .filter_map(|(name, value)| Some((name.to_owned(), value?.to_string())))
        .collect()
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
        node.schema
            .get_or_try_init(|| prepare_schema(node.addr, &node.lock, node.op_timeout))
            .await?;
        let client = connect(node.addr, node.op_timeout, &node.settings.pairs()).await?;
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
pub(crate) async fn connect(
    addr: SocketAddr,
    limit: Duration,
    settings: &[(String, String)],
) -> Result<Client, String> {
    let options: Vec<String> = settings
        .iter()
        .map(|(name, value)| format!("-c {name}={value}"))
        .collect();
    let mut config = tokio_postgres::Config::new();
    config
        .host(addr.ip().to_string())
        .port(addr.port())
        .user(PG_USER)
        .dbname(PG_DATABASE)
        .application_name("lockpick")
        .options(options.join(" "))
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
/// sent means the statement did not take effect (`fail`, with its SQLSTATE), unless it ended
/// the session (severity FATAL: an idle-session or idle-in-transaction timeout, a shutdown),
/// which let go of every lock the session held, whatever the statement was: a release that
/// "failed" so did free the lock, so it is `info`, as is a timeout or a connection that broke:
/// the statement, or the letting go, may have taken effect.
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
        Some(db) if db.severity() == "FATAL" => Outcome::Info(format!(
            "session ended: {}: {}",
            db.code().code(),
            db.message()
        )),
        Some(db) => Outcome::Fail(format!("{}: {}", db.code().code(), db.message())),
        None if e.is_closed() => Outcome::Info("connection closed".to_owned()),
        None => Outcome::Info(format!("connection: {e}")),
    }
}

/// Makes the lease table with a free row for `lock`, and the token sequence; idempotent, and
/// serialized by a transaction-level advisory lock (two-key form: never the lock under test)
/// because concurrent `CREATE … IF NOT EXISTS` can fail on PostgreSQL's catalog.
async fn prepare_schema(addr: SocketAddr, lock: &str, limit: Duration) -> Result<(), String> {
    let client = connect(addr, limit, &[]).await?;
    let sql = format!(
        "BEGIN; SELECT pg_advisory_xact_lock(0, 0); CREATE TABLE IF NOT EXISTS {TABLE} (name text PRIMARY KEY, holder text, \
         expires_at timestamptz, token bigint NOT NULL DEFAULT 0); \
         CREATE SEQUENCE IF NOT EXISTS {TOKEN_SEQUENCE}; COMMIT;"
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
