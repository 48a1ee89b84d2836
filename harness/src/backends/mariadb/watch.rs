//! Watching a `mariadb` server for what happens to the lock's records: polled every
//! [`POLL_EVERY`](crate::backends::sql::watch::POLL_EVERY) on the server's own address, four
//! statements a reading (see [`crate::backends::sql::watch`] for how readings become the record):
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

/// ER_BAD_DB_ERROR, ER_NO_SUCH_TABLE: lockpick's database or table is not made yet.
const MISSING: [u16; 2] = [1049, 1146];

/// A reading is four statements, in this order: the lease rows (their expiry), the named
/// locks taken on a lock's name (the holding connection), the server's now (times in
/// microseconds since 2000 on its clock), and the connections' ids (read after the locks).
/// The now is `SYSDATE(6)`, read after the lease rows: a lease left is never longer than
/// granted.
///
/// Four, not one: the one `UNION ALL` statement this was (a derived table of the named locks
/// and `information_schema.PROCESSLIST` beside the rows) crashed MariaDB 10.11.19 with
/// SIGSEGV freeing one of its internal temporary tables (`ha_maria::drop_table` from
/// `free_tmp_table`), in 8 of about 1,800 runs of the MariaDB rows of the default matrix's
/// publication begun at bb7a8d8: the watcher killed the server it watched. Plain reads of one
/// table each and `SHOW PROCESSLIST` (which makes no temporary table) do not go that way.
fn lease_sql() -> String {
    format!(
        "SELECT name, holder, {} FROM {DATABASE}.{LEASE_TABLE}",
        micros("expires_at")
    )
}

fn named_sql() -> String {
    format!("SELECT name, IS_USED_LOCK(name) FROM {DATABASE}.{ROW_TABLE}")
}

fn now_sql() -> String {
    format!("SELECT {}", micros("SYSDATE(6)"))
}

/// `t` in microseconds since 2000 on the server's clock.
fn micros(t: &str) -> String {
    format!("TIMESTAMPDIFF(MICROSECOND, '2000-01-01', {t})")
}

/// The watcher's connection to one server.
struct MyPoller {
    conn: Conn,
    sql: [String; 3],
}

/// Whether `e` says lockpick's database or a table of it is not made yet.
fn missing(e: &mysql_async::Error) -> bool {
    matches!(e, mysql_async::Error::Server(e) if MISSING.contains(&e.code))
}

impl Poller for MyPoller {
    async fn connect(addr: SocketAddr, limit: Duration) -> Result<MyPoller, String> {
        Ok(MyPoller {
            conn: connect_to(addr, limit, false, Vec::new()).await?,
            sql: [lease_sql(), named_sql(), now_sql()],
        })
    }

    async fn read(&mut self) -> Result<Reading, String> {
        let [lease, named, now] = &self.sql;
        let leases: Vec<(String, String, Option<i64>)> = match self.conn.query(lease).await {
            Ok(rows) => rows,
            Err(e) if missing(&e) => return Ok(Reading::default()),
            Err(e) => return Err(e.to_string()),
        };
        let names: Vec<(String, Option<i64>)> = match self.conn.query(named).await {
            Ok(rows) => rows,
            Err(e) if missing(&e) => return Ok(Reading::default()),
            Err(e) => return Err(e.to_string()),
        };
        let now_us: Option<Option<i64>> =
            (self.conn.query_first(now).await).map_err(|e| e.to_string())?;
        // What was held, and the now, are known here: the changes they show are stamped now,
        // as a one-statement reading's are at its reply, not after the sessions' read.
        let at = std::time::Instant::now();
        let processes: Vec<mysql_async::Row> =
            (self.conn.query("SHOW PROCESSLIST").await).map_err(|e| e.to_string())?;
        let mut reading = Reading {
            now_us: now_us.flatten(),
            at: Some(at),
            ..Reading::default()
        };
        let sessions = reading.sessions.get_or_insert_with(Default::default);
        sessions.extend(processes.iter().filter_map(|row| row.get::<i64, _>(0)));
        for (key, value, expires_us) in leases {
            reading.held.push(Held {
                key,
                value,
                exact: true,
                expires_us,
                session: None,
            });
        }
        for (key, owner) in names {
            if let Some(owner) = owner {
                reading.held.push(Held {
                    key,
                    value: format!("conn:{owner}"),
                    exact: false,
                    expires_us: None,
                    session: Some(owner),
                });
            }
        }
        Ok(reading)
    }
}
