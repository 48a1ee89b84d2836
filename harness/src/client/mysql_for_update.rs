//! The design documents' MySQL lock: `BEGIN; SELECT … FOR UPDATE` on the lock's row, held in
//! the open transaction for the hold time, `COMMIT` to release. Tried with `NOWAIT` and
//! retried with the scenario's delays until the acquire deadline (InnoDB's own wait is whole
//! seconds). No lease and no fencing token. The row lock lives as long as the transaction,
//! so as long as the server keeps the connection.

use super::kind::{ClientKind, ClientOptions, Runs, SINGLE_NODE};
use super::lock::{Grant, LockClient, LockSession, Outcome};
use super::mysql_node::{code, request, MyConn, MyNode, MySettings, LOCK_WAIT_TIMEOUT, ROW_TABLE};
use super::sql_options::SqlOptions;
use crate::scenario::{ClientTable, MsRange, ScenarioError};
use crate::server::NodeRule;
use mysql_async::prelude::Queryable;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

/// Makes sessions of the row lock on one server (reached through its proxy).
pub struct MyForUpdateLock {
    node: Arc<MyNode>,
}

impl MyForUpdateLock {
    pub fn new(
        addr: SocketAddr,
        lock: &str,
        op_timeout_ms: u64,
        retry_delay: MsRange,
        settings: &MySettings,
    ) -> MyForUpdateLock {
        MyForUpdateLock {
            node: Arc::new(MyNode::new(
                addr,
                lock,
                op_timeout_ms,
                retry_delay,
                settings,
            )),
        }
    }
}

/// One process's connection; its open transaction holds the row.
#[derive(Clone)]
pub struct MyForUpdateSession {
    conn: MyConn,
}

impl LockClient for MyForUpdateLock {
    type Session = MyForUpdateSession;

    async fn connect(&self, seed: u64) -> Result<MyForUpdateSession, String> {
        let select = format!("SELECT name FROM {ROW_TABLE} WHERE name = ? FOR UPDATE NOWAIT");
        Ok(MyForUpdateSession {
            conn: MyConn::open(self.node.clone(), seed, &[&select]).await?,
        })
    }

    fn lease_ms(&self) -> Option<u64> {
        None
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

pub(super) static KIND: MyForUpdateLockKind = MyForUpdateLockKind;

pub(super) struct MyForUpdateLockKind;

impl ClientKind for MyForUpdateLockKind {
    fn name(&self) -> &'static str {
        "mysql-for-update"
    }

    fn about(&self) -> &'static str {
        "SELECT … FOR UPDATE NOWAIT held in an open transaction; no lease, no token"
    }

    fn runs_on(&self) -> Runs {
        Runs::On(&["mariadb"])
    }

    fn nodes(&self) -> Option<NodeRule> {
        Some(SINGLE_NODE)
    }

    fn options(&self, table: &ClientTable<'_>) -> Result<Arc<dyn ClientOptions>, ScenarioError> {
        SqlOptions::read(table, |lock, addr, settings| {
            Box::new(Arc::new(MyForUpdateLock::new(
                addr,
                &lock.name,
                lock.op_timeout_ms,
                lock.retry_delay_ms,
                settings,
            )))
        })
    }
}
