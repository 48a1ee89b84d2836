//! The design documents' MySQL lock: `BEGIN; SELECT … FOR UPDATE` on the lock's row, held in
//! the open transaction for the hold time, `COMMIT` to release. Tried with `NOWAIT` and
//! retried with the scenario's delays until the acquire deadline (InnoDB's own wait is whole
//! seconds). No lease and no fencing token. The row lock lives as long as the transaction,
//! so as long as the server keeps the connection.

use crate::backends::mariadb::node::{
    code, request, My, MyConn, MyNode, LOCK_WAIT_TIMEOUT, ROW_TABLE,
};
use crate::backends::sql::kind::SqlKind;
use crate::backends::sql::lock::{SqlLock, SqlRecipe};
use crate::client::lock::{Grant, LockSession, Outcome};
use mysql_async::prelude::Queryable;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Instant;

/// The row lock on one server (reached through its proxy).
pub type MyForUpdateLock = SqlLock<MyForUpdateSession>;

/// One process's connection; its open transaction holds the row.
#[derive(Clone)]
pub struct MyForUpdateSession {
    conn: MyConn,
}

impl SqlRecipe for MyForUpdateSession {
    type Dialect = My;
    const LEASED: bool = false;

    async fn open(
        node: Arc<MyNode>,
        seed: u64,
        _ttl_ms: u64,
    ) -> Result<MyForUpdateSession, String> {
        let select = format!("SELECT name FROM {ROW_TABLE} WHERE name = ? FOR UPDATE NOWAIT");
        Ok(MyForUpdateSession {
            conn: MyConn::open(node, seed, &[&select]).await?,
        })
    }
}

/// One try: `Ok(true)` when the row is ours, `Ok(false)` when another transaction has it.
async fn try_once(conn: &MyConn) -> Outcome<bool> {
    let node = &conn.node;
    let mut c = conn.conn.lock().await;
    let begun = request(node.op_timeout, c.query_drop("BEGIN")).await;
    if !matches!(begun, Outcome::Ok(())) {
        return begun.map(|()| false);
    }
    let select = request(
        node.op_timeout,
        c.exec_first::<String, _, _>(&conn.statements[0], (&node.lock,)),
    )
    .await;
    let verdict = match select {
        Outcome::Ok(Some(_)) => return Outcome::Ok(true),
        Outcome::Ok(None) => Outcome::Fail("no-row".to_owned()),
        Outcome::Fail(e) if code(&e) == Some(LOCK_WAIT_TIMEOUT) => Outcome::Ok(false),
        Outcome::Fail(e) => Outcome::Fail(e),
        Outcome::Info(e) => return Outcome::Info(e),
    };
    request(node.op_timeout, c.query_drop("ROLLBACK"))
        .await
        .and_then(|()| verdict)
}

impl LockSession for MyForUpdateSession {
    async fn acquire(&mut self, holder: &str, deadline: Instant) -> Outcome<Grant> {
        self.conn
            .poll(deadline, |conn| async move {
                let sent_at = Instant::now();
                try_once(&conn).await.map(|taken| {
                    taken.then(|| Grant {
                        token: None,
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
        request(conn.node.op_timeout, c.query_drop("COMMIT")).await
    }

    /// No lease to extend: the row is held as long as the transaction.
    async fn renew(&mut self, _grant: &Grant) -> Outcome<()> {
        Outcome::Fail("no-lease".to_owned())
    }
}

pub(super) static KIND: SqlKind<MyForUpdateSession> = SqlKind {
    name: "mysql-for-update",
    about: "SELECT … FOR UPDATE NOWAIT held in an open transaction; no lease, no token",
    recipe: PhantomData,
};
