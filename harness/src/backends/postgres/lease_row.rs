//! The PostgreSQL lease row: a row per lock with its holder, expiry and a counter. Acquire is
//! one `UPDATE … WHERE the lease is free or expired RETURNING token`, so taking the lease and
//! bumping the token are one atomic step and the token is a real fencing token; release and
//! renew match holder *and* token. The expiry is the server's `now()`: a clock jump of the
//! server moves every lease.

use crate::backends::postgres::node::{request, Pg, PgConn, PgNode, TABLE};
use crate::backends::sql::kind::SqlKind;
use crate::backends::sql::lock::{SqlLock, SqlRecipe};
use crate::client::lock::{Grant, LockSession, Outcome};
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Instant;

const ACQUIRE: usize = 0;
const RELEASE: usize = 1;
const RENEW: usize = 2;

fn statements() -> [String; 3] {
    let expiry = "now() + $3::bigint * interval '1 millisecond'";
    [
        format!(
            "UPDATE {TABLE} SET holder = $1, expires_at = {expiry}, token = token + 1 \
             WHERE name = $2 AND (holder IS NULL OR expires_at < now()) RETURNING token"
        ),
        format!(
            "UPDATE {TABLE} SET holder = NULL, expires_at = NULL \
             WHERE name = $1 AND holder = $2 AND token = $3"
        ),
        // A lease that already expired is not revived: someone may have seen it free.
        format!(
            "UPDATE {TABLE} SET expires_at = {expiry} \
             WHERE name = $2 AND holder = $1 AND token = $4 AND expires_at >= now()"
        ),
    ]
}

/// The lease-row lock on one server (reached through its proxy).
pub type PgLeaseRowLock = SqlLock<PgLeaseRowSession>;

/// One process's connection to the server.
#[derive(Clone)]
pub struct PgLeaseRowSession {
    conn: PgConn,
    ttl_ms: i64,
}

impl SqlRecipe for PgLeaseRowSession {
    type Dialect = Pg;
    const LEASED: bool = true;

    async fn open(node: Arc<PgNode>, seed: u64, ttl_ms: u64) -> Result<PgLeaseRowSession, String> {
        let sql = statements();
        let sql: Vec<&str> = sql.iter().map(String::as_str).collect();
        Ok(PgLeaseRowSession {
            conn: PgConn::open(node, seed, &sql).await?,
            ttl_ms: ttl_ms as i64,
        })
    }
}

impl PgLeaseRowSession {
    /// Runs release or renew; `Ok` when it matched our row, `Fail(not_ours)` otherwise.
    async fn if_ours(&self, which: usize, grant: &Grant, not_ours: &str) -> Outcome<()> {
        let conn = &self.conn;
        let token = grant.token.unwrap_or_default() as i64;
        let name = &conn.node.lock;
        let statement = &conn.statements[which];
        let run = match which {
            RELEASE => {
                request(
                    conn.node.op_timeout,
                    conn.client
                        .execute(statement, &[name, &grant.holder, &token]),
                )
                .await
            }
            _ => {
                request(
                    conn.node.op_timeout,
                    conn.client
                        .execute(statement, &[&grant.holder, name, &self.ttl_ms, &token]),
                )
                .await
            }
        };
        run.and_then(|rows| match rows {
            1 => Outcome::Ok(()),
            _ => Outcome::Fail(not_ours.to_owned()),
        })
    }
}

impl LockSession for PgLeaseRowSession {
    async fn acquire(&mut self, holder: &str, deadline: Instant) -> Outcome<Grant> {
        let ttl_ms = self.ttl_ms;
        self.conn
            .poll(deadline, |conn| async move {
                let sent_at = Instant::now();
                let row = request(
                    conn.node.op_timeout,
                    conn.client.query_opt(
                        &conn.statements[ACQUIRE],
                        &[&holder, &conn.node.lock, &ttl_ms],
                    ),
                )
                .await;
                row.map(|row| {
                    row.map(|row| Grant {
                        token: Some(row.get::<_, i64>(0) as u64),
                        holder: holder.to_owned(),
                        lease_ms: Some(ttl_ms as u64),
                        sent_at,
                        request_sent: Some(sent_at),
                        owner: None,
                    })
                })
            })
            .await
    }

    async fn release(&mut self, grant: &Grant) -> Outcome<()> {
        self.if_ours(RELEASE, grant, "not-owner").await
    }

    async fn renew(&mut self, grant: &Grant) -> Outcome<()> {
        self.if_ours(RENEW, grant, "lost").await
    }
}

pub(super) static KIND: SqlKind<PgLeaseRowSession> = SqlKind {
    name: "pg-lease-row",
    about: "a lease row: UPDATE … WHERE free or expired RETURNING token; token: the row's counter (a real fencing token)",
    recipe: PhantomData,
};
