//! Upper bounds of the session settings a `[client]` table gives a SQL lock, checked when the
//! scenario loads: a value past the server's own limit is refused by the server only when a
//! session sets it, mid-run, after every server started (an `idle_in_transaction_session_timeout_ms`
//! of 2^63 - 1 on pg-for-update hung the run past its time limit).

use serde::{Deserialize, Deserializer};

/// PostgreSQL's integer settings (timeouts in ms or s, the keepalive count) go up to INT_MAX.
pub(crate) const PG_INT_MAX: u64 = i32::MAX as u64;
/// MariaDB's `wait_timeout`: at most 31,536,000 s (a year).
pub(crate) const MARIADB_WAIT_TIMEOUT_MAX_S: u64 = 31_536_000;

fn at_most<'de, D: Deserializer<'de>>(
    d: D,
    max: u64,
    server: &str,
) -> Result<Option<u64>, D::Error> {
    match Option::<u64>::deserialize(d)? {
        Some(v) if v > max => Err(serde::de::Error::custom(format!(
            "{v} is past {server}'s limit for this setting; allowed: 0 to {max}"
        ))),
        v => Ok(v),
    }
}

/// A PostgreSQL integer setting: at most [`PG_INT_MAX`].
pub(crate) fn pg_int<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    at_most(d, PG_INT_MAX, "PostgreSQL")
}

/// MariaDB's `wait_timeout`: at most [`MARIADB_WAIT_TIMEOUT_MAX_S`].
pub(crate) fn mariadb_wait_timeout<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<u64>, D::Error> {
    at_most(d, MARIADB_WAIT_TIMEOUT_MAX_S, "MariaDB")
}
