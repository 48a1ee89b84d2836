//! The PostgreSQL session-level advisory lock: `pg_try_advisory_lock(hashtext(name))` polled on
//! a dedicated connection, `pg_advisory_unlock` to release. There is no lease: the lock lives
//! exactly as long as the server believes the session lives, so a holder whose connection the
//! server closes (idle_session_timeout, TCP keepalives giving up, a restart) loses it without
//! being told, and a holder the server still believes alive keeps it however long it is gone.
//!
//! The acquire statement first sets the session's `application_name` to the holder value, so
//! the server's record (`watch.rs`, reading `pg_stat_activity` beside `pg_locks`) names the
//! holder exactly: in the same statement, no round trip of its own.
//!
//! Fencing token: `nextval` of a sequence in the same statement as the grant, evaluated only
//! when the lock was taken. The next holder can only take the lock after this one lost or
//! released it, so its `nextval` comes later and is larger: tokens grow with the order of
//! holders, as long as the server remembers the sequence (a crash with `synchronous_commit`
//! off may forget the last values handed out, and hand them out again).

use crate::backends::postgres::node::{request, Pg, PgConn, PgNode, TOKEN_SEQUENCE};
use crate::backends::sql::kind::SqlKind;
use crate::backends::sql::lock::{SqlLock, SqlRecipe};
use crate::client::lock::{Grant, LockSession, Outcome};
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Instant;

const ACQUIRE: usize = 0;
const RELEASE: usize = 1;

fn statements() -> [String; 2] {
    [
        // The holder value as the session's application_name first (CASE evaluates its
        // conditions in order; set_config never returns NULL), for the server record.
        format!(
            "SELECT CASE WHEN set_config('application_name', $2, false) IS NULL THEN NULL \
             WHEN pg_try_advisory_lock(hashtext($1)) THEN nextval('{TOKEN_SEQUENCE}') END"
        ),
        "SELECT pg_advisory_unlock(hashtext($1))".to_owned(),
    ]
}

/// The advisory lock on one server (reached through its proxy).
pub type PgAdvisoryLock = SqlLock<PgAdvisorySession>;

/// One process's session: its connection holds the lock.
#[derive(Clone)]
pub struct PgAdvisorySession {
    conn: PgConn,
}

impl SqlRecipe for PgAdvisorySession {
    type Dialect = Pg;
    const LEASED: bool = false;

    async fn open(node: Arc<PgNode>, seed: u64, _ttl_ms: u64) -> Result<PgAdvisorySession, String> {
        let sql = statements();
        let sql: Vec<&str> = sql.iter().map(String::as_str).collect();
        Ok(PgAdvisorySession {
            conn: PgConn::open(node, seed, &sql).await?,
        })
    }
}

impl LockSession for PgAdvisorySession {
    async fn acquire(&mut self, holder: &str, deadline: Instant) -> Outcome<Grant> {
        self.conn
            .poll(deadline, |conn| async move {
                let sent_at = Instant::now();
                let row = request(
                    conn.node.op_timeout,
                    conn.client
                        .query_one(&conn.statements[ACQUIRE], &[&conn.node.lock, &holder]),
                )
                .await;
                row.map(|row| {
                    row.get::<_, Option<i64>>(0).map(|token| Grant {
                        token: Some(token as u64),
                        holder: holder.to_owned(),
                        lease_ms: None,
                        sent_at,
                        request_sent: Some(sent_at),
                        owner: None,
                    })
                })
            })
            .await
    }

    async fn release(&mut self, _grant: &Grant) -> Outcome<()> {
        let conn = &self.conn;
        request(
            conn.node.op_timeout,
            conn.client
                .query_one(&conn.statements[RELEASE], &[&conn.node.lock]),
        )
        .await
        .and_then(|row| match row.get::<_, bool>(0) {
            true => Outcome::Ok(()),
            // The server also logs "you don't own a lock of type ExclusiveLock".
            false => Outcome::Fail("not-owner".to_owned()),
        })
    }

    /// No lease to extend: the lock lasts as long as the session.
    async fn renew(&mut self, _grant: &Grant) -> Outcome<()> {
        Outcome::Fail("no-lease".to_owned())
    }
}

pub(super) static KIND: SqlKind<PgAdvisorySession> = SqlKind {
    name: "pg-advisory",
    about: "session-level pg_try_advisory_lock, no lease; token: nextval of a sequence in the granting statement",
    recipe: PhantomData,
};
