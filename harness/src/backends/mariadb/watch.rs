//! Watching a `mariadb` server for what happens to the lock's records: polled every
//! [`POLL_EVERY`](crate::backends::sql::watch::POLL_EVERY) on the server's own address, one
//! statement reading (see [`crate::backends::sql::watch`] for how readings become the record):
//!
//! - **lease rows** (`mysql-lease-row`): each row of the lease table, its value the holder
//!   (the acquire's holder value: exact attribution) and its `expires_at` beside the
//!   server's `SYSDATE(6)`, both on the server's clock. The recipe deletes an expired row
//!   before inserting its own: a reading between the two sees the row gone after its lease
//!   ran out, `expired`;
//! - **named locks** (`mysql-get-lock`): `IS_USED_LOCK` of each name in the lock table (every
//!   MariaDB recipe inserts its lock's row there), its value the holding connection's id,
//!   `conn:<id>`: MariaDB keeps nothing a session could set for others to read, so the checker
//!   attributes it by the acquire windows open when it was set, and only a set seen soon
//!   enough is written;
//! - **`SELECT … FOR UPDATE`** (`mysql-for-update`): nothing. A row lock leaves no record
//!   another session can read without taking part, so those runs have an empty server record.
//!
//! Until the first session makes lockpick's database there is nothing to read (the statement
//! fails on the missing table, read as nothing held).

use super::node::{connect_to, DATABASE, LEASE_TABLE, ROW_TABLE};
use crate::backends::sql::watch::{self, Held, Poller, Reading};
use crate::server::{BoxFuture, Watch, WatchCtx, Watching};
use mysql_async::prelude::Queryable;
use mysql_async::Conn;
use std::net::SocketAddr;
use std::time::Duration;

pub(super) struct MariaDbWatch;

impl Watch for MariaDbWatch {
    fn start(&self, ctx: WatchCtx) -> BoxFuture<'static, Result<Watching, String>> {
        Box::pin(watch::start::<MyPoller>(ctx))
    }
}

/// What a reading's row is.
const ROW: i64 = 0;
const NAMED: i64 = 1;
const NOW: i64 = 2;
const SESSION: i64 = 3;

/// ER_BAD_DB_ERROR, ER_NO_SUCH_TABLE: lockpick's database or table is not made yet.
const MISSING: [u16; 2] = [1049, 1146];

/// One statement: the lease rows (their expiry), the named locks taken on a lock's name (the
/// holding connection), the server's now (times in microseconds since 2000 on its clock), and
/// the connections' ids (read after the locks). The now is `SYSDATE(6)`, read when its row is
/// made, after the lease rows were read: a lease left is never longer than granted (`NOW(6)`,
/// the statement's start, may come before a grant the read sees).
fn reading_sql() -> String {
    let us = |t: &str| format!("TIMESTAMPDIFF(MICROSECOND, '2000-01-01', {t})");
    format!(
        "SELECT {ROW} AS kind, name, holder AS value, {} AS num FROM {DATABASE}.{LEASE_TABLE} \
         UNION ALL \
         SELECT {NAMED}, name, CONCAT('conn:', owner), owner \
         FROM (SELECT name, IS_USED_LOCK(name) AS owner FROM {DATABASE}.{ROW_TABLE}) AS named \
         WHERE owner IS NOT NULL \
         UNION ALL \
         SELECT {NOW}, NULL, NULL, {} \
         UNION ALL \
         SELECT {SESSION}, NULL, NULL, ID FROM information_schema.PROCESSLIST",
        us("expires_at"),
        us("SYSDATE(6)")
    )
}

/// The watcher's connection to one server.
struct MyPoller {
    conn: Conn,
    sql: String,
}

type ReadRow = (i64, Option<String>, Option<String>, Option<i64>);

impl Poller for MyPoller {
    async fn connect(addr: SocketAddr, limit: Duration) -> Result<MyPoller, String> {
        Ok(MyPoller {
            conn: connect_to(addr, limit, false, Vec::new()).await?,
            sql: reading_sql(),
        })
    }

    async fn read(&mut self) -> Result<Reading, String> {
        let rows: Vec<ReadRow> = match self.conn.query(self.sql.as_str()).await {
            Ok(rows) => rows,
            Err(mysql_async::Error::Server(e)) if MISSING.contains(&e.code) => {
                return Ok(Reading::default())
            }
            Err(e) => return Err(e.to_string()),
        };
        let mut reading = Reading::default();
        for (kind, name, value, num) in rows {
            match (kind, name, value) {
                (NOW, _, _) => reading.now_us = num,
                (SESSION, _, _) => {
                    let sessions = reading.sessions.get_or_insert_with(Default::default);
                    sessions.extend(num);
                }
                (ROW, Some(key), Some(value)) => reading.held.push(Held {
                    key,
                    value,
                    exact: true,
                    expires_us: num,
                    session: None,
                }),
                (NAMED, Some(key), Some(value)) => reading.held.push(Held {
                    key,
                    value,
                    exact: false,
                    expires_us: None,
                    session: num,
                }),
                _ => {}
            }
        }
        Ok(reading)
    }
}
