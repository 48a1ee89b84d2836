//! MariaDB/MySQL named locks: `GET_LOCK(name, 0)` polled on a dedicated connection,
//! `RELEASE_LOCK(name)` to release. Like PostgreSQL's advisory lock, there is no lease: the
//! lock lives as long as the server keeps the connection (`wait_timeout` ends an idle one).
//! Fencing token: `NEXTVAL` of a sequence in the same statement, evaluated only when the lock
//! was granted (`IF` evaluates one branch), so tokens grow with the order of holders.

use crate::backends::mariadb::node::{request, My, MyConn, MyNode, TOKEN_SEQUENCE};
use crate::backends::sql::kind::SqlKind;
use crate::backends::sql::lock::{SqlLock, SqlRecipe};
use crate::client::lock::{Grant, LockSession, Outcome};
use mysql_async::prelude::Queryable;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Instant;

const ACQUIRE: usize = 0;
const RELEASE: usize = 1;

/// The named lock on one server (reached through its proxy).
pub type MyGetLock = SqlLock<MyGetLockSession>;

/// One process's session: its connection holds the lock.
#[derive(Clone)]
pub struct MyGetLockSession {
    conn: MyConn,
}

impl SqlRecipe for MyGetLockSession {
    type Dialect = My;
    const LEASED: bool = false;

    async fn open(node: Arc<MyNode>, seed: u64, _ttl_ms: u64) -> Result<MyGetLockSession, String> {
        let acquire = format!("SELECT IF(GET_LOCK(?, 0) = 1, NEXTVAL({TOKEN_SEQUENCE}), NULL)");
        let sql = [acquire.as_str(), "SELECT RELEASE_LOCK(?)"];
        Ok(MyGetLockSession {
            conn: MyConn::open(node, seed, &sql).await?,
        })
    }
}

impl LockSession for MyGetLockSession {
    async fn acquire(&mut self, holder: &str, deadline: Instant) -> Outcome<Grant> {
        self.conn
            .poll(deadline, |conn| async move {
                let sent_at = Instant::now();
                let mut c = conn.conn.lock().await;
                let token = request(
                    conn.node.op_timeout,
                    c.exec_first::<Option<u64>, _, _>(
                        &conn.statements[ACQUIRE],
                        (&conn.node.lock,),
                    ),
                )
                .await;
                token.map(|token| {
                    token.flatten().map(|token| Grant {
                        token: Some(token),
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
        let mut c = conn.conn.lock().await;
        request(
            conn.node.op_timeout,
            c.exec_first::<Option<i64>, _, _>(&conn.statements[RELEASE], (&conn.node.lock,)),
        )
        .await
        .and_then(|released| match released.flatten() {
            Some(1) => Outcome::Ok(()),
            // 0: another connection holds it; NULL: nobody does.
            _ => Outcome::Fail("not-owner".to_owned()),
        })
    }

    /// No lease to extend: the lock lasts as long as the connection.
    async fn renew(&mut self, _grant: &Grant) -> Outcome<()> {
        Outcome::Fail("no-lease".to_owned())
    }
}

pub(super) static KIND: SqlKind<MyGetLockSession> = SqlKind {
    name: "mysql-get-lock",
    about: "GET_LOCK/RELEASE_LOCK on a dedicated connection, no lease; token: NEXTVAL of a sequence in the granting statement",
    recipe: PhantomData,
};
