//! Watching a `postgres` server for what happens to the lock's records: polled every
//! [`POLL_EVERY`](crate::backends::sql::watch::POLL_EVERY) on the server's own address, one
//! statement reading (see [`crate::backends::sql::watch`] for how readings become the record):
//!
//! - **lease rows** (`pg-lease-row`): each row of the lock table with a holder, its value the
//!   holder (the acquire's holder value: exact attribution) and its `expires_at` on the
//!   server's clock beside the server's `clock_timestamp()`;
//! - **advisory locks** (`pg-advisory`): each granted one-key advisory lock (`pg_locks`) whose
//!   key is `hashtext` of a name in the lock table (every PostgreSQL recipe inserts its lock's
//!   row), its value the holding backend's `application_name`, which the advisory recipe sets
//!   to the holder value in its acquire statement (exact attribution); a backend that did not
//!   set one is `pid:<pid>`, attributed by its windows only. `pg_stat_activity` is read in a
//!   subquery evaluated per lock row, so after `pg_locks`: the name seen is the one the holder
//!   set before asking;
//! - **`SELECT … FOR UPDATE`** (`pg-for-update`): nothing. A row lock leaves no record another
//!   session can read without taking part (`pg_locks` shows a transaction id, not the row), so
//!   those runs have an empty server record.
//!
//! Until the first session makes the lock table there is nothing to read (the statement fails
//! on the missing table, read as nothing held).

use super::node::{connect, TABLE};
use crate::backends::sql::watch::{self, Held, Poller, Reading};
use crate::server::{BoxFuture, Watch, WatchCtx, Watching};
use std::net::SocketAddr;
use std::time::Duration;
use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, Statement};

pub(super) struct PgWatch;

impl Watch for PgWatch {
    fn start(&self, ctx: WatchCtx) -> BoxFuture<'static, Result<Watching, String>> {
        Box::pin(watch::start::<PgPoller>(ctx))
    }
}

/// What a reading's row is.
const ROW: i32 = 0;
const ADVISORY: i32 = 1;
const NOW: i32 = 2;
const SESSION: i32 = 3;

/// One statement: the lease rows with a holder (their expiry), the advisory locks taken on a
/// lock's name (the holding backend's `application_name` and pid), the server's now (times in
/// microseconds since the epoch on the server's clock), and the client backends' pids (read
/// after the locks: `pg_stat_activity` is read once a statement, first by the advisory
/// rows' subquery). The now is `clock_timestamp()`, read after the rows' snapshot: every
/// grant the rows show was made before it, so a lease left is never longer than granted
/// (`now()`, the statement's start, may come before a grant the snapshot sees).
fn reading_sql() -> String {
    format!(
        "SELECT {ROW} AS kind, name, holder AS value, \
           (extract(epoch FROM expires_at) * 1000000)::bigint AS num \
         FROM {TABLE} WHERE holder IS NOT NULL \
         UNION ALL \
         SELECT {ADVISORY}, t.name, \
           (SELECT a.application_name FROM pg_stat_activity a WHERE a.pid = l.pid), \
           l.pid::bigint \
         FROM pg_locks l JOIN {TABLE} t ON l.locktype = 'advisory' AND l.granted \
           AND l.objsubid = 1 \
           AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtext(t.name)::bigint \
         UNION ALL \
         SELECT {NOW}, NULL, NULL, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint \
         UNION ALL \
         SELECT {SESSION}, NULL, NULL, pid::bigint FROM pg_stat_activity \
         WHERE backend_type = 'client backend'"
    )
}

/// The watcher's connection to one server, with its statement once the lock table exists.
struct PgPoller {
    client: Client,
    statement: Option<Statement>,
}

impl Poller for PgPoller {
    async fn connect(addr: SocketAddr, limit: Duration) -> Result<PgPoller, String> {
        Ok(PgPoller {
            client: connect(addr, limit, &[]).await?,
            statement: None,
        })
    }

    async fn read(&mut self) -> Result<Reading, String> {
        let missing = |e: &tokio_postgres::Error| e.code() == Some(&SqlState::UNDEFINED_TABLE);
        let statement = match &self.statement {
            Some(s) => s.clone(),
            None => match self.client.prepare(&reading_sql()).await {
                Ok(s) => self.statement.insert(s).clone(),
                Err(e) if missing(&e) => return Ok(Reading::default()),
                Err(e) => return Err(e.to_string()),
            },
        };
        let rows = match self.client.query(&statement, &[]).await {
            Ok(rows) => rows,
            Err(e) if missing(&e) => return Ok(Reading::default()),
            Err(e) => return Err(e.to_string()),
        };
        let mut reading = Reading::default();
        for row in rows {
            let kind: i32 = row.get(0);
            let name: Option<String> = row.get(1);
            let value: Option<String> = row.get(2);
            let num: Option<i64> = row.get(3);
            match (kind, name) {
                (NOW, _) => reading.now_us = num,
                (SESSION, _) => {
                    let sessions = reading.sessions.get_or_insert_with(Default::default);
                    sessions.extend(num);
                }
                (ROW, Some(key)) => reading.held.extend(value.map(|value| Held {
                    key,
                    value,
                    exact: true,
                    expires_us: num,
                    session: None,
                })),
                (ADVISORY, Some(key)) => {
                    let named = value.filter(|v| !v.is_empty() && v != "lockpick");
                    reading.held.push(Held {
                        key,
                        exact: named.is_some(),
                        value: named.unwrap_or_else(|| format!("pid:{}", num.unwrap_or(0))),
                        expires_us: None,
                        session: num,
                    });
                }
                _ => {}
            }
        }
        Ok(reading)
    }
}
