//! The MariaDB/MySQL lease row, as the design documents give it: insert a row to take the
//! lock, with an expiry the lock maintains itself. Acquire deletes the lock's row if it has
//! expired (by the server's `NOW(6)`), then inserts one; a duplicate key means someone holds
//! it. The row's auto-increment id is the fencing token (InnoDB keeps the counter across
//! restarts since MariaDB 10.2). Release deletes the row by holder and id; renew moves the
//! expiry of a row that has not expired yet.

use crate::backends::mariadb::node::{
    code, request, My, MyConn, MyNode, DUPLICATE_KEY, LEASE_TABLE,
};
use crate::backends::sql::kind::SqlKind;
use crate::backends::sql::lock::{SqlLock, SqlRecipe};
use crate::client::lock::{Grant, LockSession, Outcome};
use mysql_async::prelude::Queryable;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Instant;

const EXPIRE: usize = 0;
const INSERT: usize = 1;
const RELEASE: usize = 2;
const RENEW: usize = 3;

fn statements() -> [String; 4] {
    let expiry = "NOW(6) + INTERVAL ? MICROSECOND";
    [
        format!("DELETE FROM {LEASE_TABLE} WHERE name = ? AND expires_at < NOW(6)"),
        format!("INSERT INTO {LEASE_TABLE} (name, holder, expires_at) VALUES (?, ?, {expiry})"),
        format!("DELETE FROM {LEASE_TABLE} WHERE name = ? AND holder = ? AND id = ?"),
        format!(
            "UPDATE {LEASE_TABLE} SET expires_at = {expiry} \
             WHERE name = ? AND holder = ? AND id = ? AND expires_at >= NOW(6)"
        ),
    ]
}

/// The lease-row lock on one server (reached through its proxy).
pub type MyLeaseRowLock = SqlLock<MyLeaseRowSession>;

/// One process's connection to the server.
#[derive(Clone)]
pub struct MyLeaseRowSession {
    conn: MyConn,
    ttl_us: u64,
}

impl SqlRecipe for MyLeaseRowSession {
    type Dialect = My;
    const LEASED: bool = true;

    async fn open(node: Arc<MyNode>, seed: u64, ttl_ms: u64) -> Result<MyLeaseRowSession, String> {
        let sql = statements();
        let sql: Vec<&str> = sql.iter().map(String::as_str).collect();
        Ok(MyLeaseRowSession {
            conn: MyConn::open(node, seed, &sql).await?,
            ttl_us: ttl_ms * 1000,
        })
    }
}

/// One try: `Ok(Some(id))` when our row went in, `Ok(None)` when another holder's is there.
async fn try_once(conn: &MyConn, holder: &str, ttl_us: u64) -> Outcome<Option<u64>> {
    let node = &conn.node;
    let mut c = conn.conn.lock().await;
    let expired = request(
        node.op_timeout,
        c.exec_drop(&conn.statements[EXPIRE], (&node.lock,)),
    )
    .await;
    if !matches!(expired, Outcome::Ok(())) {
        return expired.map(|()| None);
    }
    let inserted = request(
        node.op_timeout,
        c.exec_drop(&conn.statements[INSERT], (&node.lock, holder, ttl_us)),
    )
    .await;
    match inserted {
        Outcome::Ok(()) => match c.last_insert_id() {
            Some(id) => Outcome::Ok(Some(id)),
            None => Outcome::Info("no insert id".to_owned()),
        },
        Outcome::Fail(e) if code(&e) == Some(DUPLICATE_KEY) => Outcome::Ok(None),
        other => other.map(|()| None),
    }
}

impl LockSession for MyLeaseRowSession {
    async fn acquire(&mut self, holder: &str, deadline: Instant) -> Outcome<Grant> {
        let ttl_us = self.ttl_us;
        self.conn
            .poll(deadline, |conn| async move {
                let sent_at = Instant::now();
                try_once(&conn, holder, ttl_us).await.map(|id| {
                    id.map(|id| Grant {
                        token: Some(id),
                        holder: holder.to_owned(),
                        lease_ms: Some(ttl_us / 1000),
                        sent_at,
                        request_sent: Some(sent_at),
                        owner: None,
                    })
                })
            })
            .await
    }

    async fn release(&mut self, grant: &Grant) -> Outcome<()> {
        let conn = &self.conn;
        let node = &conn.node;
        let mut c = conn.conn.lock().await;
        let params = (&node.lock, &grant.holder, grant.token.unwrap_or_default());
        request(
            node.op_timeout,
            c.exec_drop(&conn.statements[RELEASE], params),
        )
        .await
        .and_then(|()| match c.affected_rows() {
            1 => Outcome::Ok(()),
            _ => Outcome::Fail("not-owner".to_owned()),
        })
    }

    async fn renew(&mut self, grant: &Grant) -> Outcome<()> {
        let conn = &self.conn;
        let node = &conn.node;
        let mut c = conn.conn.lock().await;
        let params = (
            self.ttl_us,
            &node.lock,
            &grant.holder,
            grant.token.unwrap_or_default(),
        );
        request(
            node.op_timeout,
            c.exec_drop(&conn.statements[RENEW], params),
        )
        .await
        .and_then(|()| match c.affected_rows() {
            1 => Outcome::Ok(()),
            _ => Outcome::Fail("lost".to_owned()),
        })
    }
}

pub(super) static KIND: SqlKind<MyLeaseRowSession> = SqlKind {
    name: "mysql-lease-row",
    about: "an inserted row with an expiry (expired rows deleted by the next taker); token: the row's auto-increment id",
    recipe: PhantomData,
};
