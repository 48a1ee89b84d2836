//! "Lock the row while working": `BEGIN; SELECT … FOR UPDATE` on the lock's row, held in the
//! open transaction for the hold time, `COMMIT` to release. Waiting is the server's (the
//! SELECT blocks, bounded by `lock_timeout` at the acquire deadline). No lease and no fencing
//! token: the pattern as the design documents give it. The row lock lives as long as the
//! transaction, so as long as the server keeps the session (see `idle_in_transaction_session_
//! timeout`).

use crate::backends::postgres::node::{request, Pg, PgConn, PgNode, TABLE};
use crate::backends::sql::kind::SqlKind;
use crate::backends::sql::lock::{SqlLock, SqlRecipe};
use crate::client::lock::{Grant, LockSession, Outcome};
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// SQLSTATE of a `lock_timeout` that expired: the row is someone else's.
const LOCK_NOT_AVAILABLE: &str = "55P03";

/// The row lock on one server (reached through its proxy).
pub type PgForUpdateLock = SqlLock<PgForUpdateSession>;

/// One process's connection; its open transaction holds the row.
#[derive(Clone)]
pub struct PgForUpdateSession {
    conn: PgConn,
}

impl SqlRecipe for PgForUpdateSession {
    type Dialect = Pg;
    const LEASED: bool = false;

    async fn open(
        node: Arc<PgNode>,
        seed: u64,
        _ttl_ms: u64,
    ) -> Result<PgForUpdateSession, String> {
        let select = format!("SELECT name FROM {TABLE} WHERE name = $1 FOR UPDATE");
        Ok(PgForUpdateSession {
            conn: PgConn::open(node, seed, &[&select]).await?,
        })
    }
}

impl PgForUpdateSession {
    /// One blocking try, waiting at most `wait` for the row.
    async fn try_once(&self, wait: Duration) -> Outcome<bool> {
        let conn = &self.conn;
        let limit = conn.node.op_timeout;
        // lock_timeout 0 would mean "wait forever".
        let begin = format!(
            "BEGIN; SET LOCAL lock_timeout = {}",
            wait.as_millis().max(1)
        );
        let begun = request(limit, conn.client.batch_execute(&begin)).await;
        if !matches!(begun, Outcome::Ok(())) {
            return begun.map(|()| false);
        }
        let select = request(
            limit + wait,
            conn.client
                .query_opt(&conn.statements[0], &[&conn.node.lock]),
        )
        .await;
        match select {
            Outcome::Ok(Some(_)) => Outcome::Ok(true),
            Outcome::Ok(None) => self
                .rollback()
                .await
                .and_then(|()| Outcome::Fail("no-row".to_owned())),
            Outcome::Fail(e) if e.starts_with(LOCK_NOT_AVAILABLE) => {
                self.rollback().await.map(|()| false)
            }
            Outcome::Fail(e) => self.rollback().await.and_then(|()| Outcome::Fail(e)),
            Outcome::Info(e) => Outcome::Info(e),
        }
    }

    async fn rollback(&self) -> Outcome<()> {
        let conn = &self.conn;
        request(conn.node.op_timeout, conn.client.batch_execute("ROLLBACK")).await
    }
}

impl LockSession for PgForUpdateSession {
    async fn acquire(&mut self, holder: &str, deadline: Instant) -> Outcome<Grant> {
        let me = self.clone();
        self.conn
            .poll(deadline, |_| {
                let me = me.clone();
                async move {
                    let sent_at = Instant::now();
                    let wait = deadline.saturating_duration_since(sent_at);
                    me.try_once(wait).await.map(|taken| {
                        taken.then(|| Grant {
                            token: None,
                            holder: holder.to_owned(),
                            lease_ms: None,
                            sent_at,
                            request_sent: Some(sent_at),
                            owner: None,
                        })
                    })
                }
            })
            .await
    }

    async fn release(&mut self, _grant: &Grant) -> Outcome<()> {
        let conn = &self.conn;
        request(conn.node.op_timeout, conn.client.batch_execute("COMMIT")).await
    }

    /// No lease to extend: the row is held as long as the transaction.
    async fn renew(&mut self, _grant: &Grant) -> Outcome<()> {
        Outcome::Fail("no-lease".to_owned())
    }
}

pub(super) static KIND: SqlKind<PgForUpdateSession> = SqlKind {
    name: "pg-for-update",
    about: "SELECT … FOR UPDATE held in an open transaction; no lease, no token",
    recipe: PhantomData,
};
