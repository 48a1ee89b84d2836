//! A PostgreSQL streaming replica: its data folder copied from a live primary with
//! `pg_basebackup --write-recovery-conf` (which leaves `standby.signal` and the
//! `primary_conninfo` naming the address it copied from, so the replica streams WAL over that
//! same link), the primary's view of its replicas (`pg_stat_replication`), and the promotion
//! that makes a replica a primary (`SELECT pg_promote()`).
//!
//! initdb's default `pg_hba.conf` trusts replication connections from 127.0.0.1, and
//! PostgreSQL 15's defaults (`wal_level = replica`, `max_wal_senders = 10`, `hot_standby =
//! on`) are what a streaming replica needs, so neither side needs settings of its own.

use std::io;
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use std::time::Duration;

use crate::backends::postgres::process::{run_setup, PgOptions, DATABASE, USER};
use crate::processes::folder::NodeFolder;
use crate::processes::run_as::Account;

/// pg_basebackup's output, in the node folder.
const BASEBACKUP_LOG: &str = "basebackup.log";
/// How long a promotion may take before `pg_promote` gives up (its own default is 60 s).
const PROMOTE_WAIT_S: u32 = 30;

/// Copies the primary at `primary` into `folder.data` as a standby that streams from it.
/// Blocking, like initdb; runs as the server's account when lockpick is root.
pub(super) fn base_backup(
    options: &PgOptions,
    folder: &NodeFolder,
    primary: SocketAddr,
    account: Option<Account>,
) -> io::Result<()> {
    let mut command = Command::new(options.binary.with_file_name("pg_basebackup"));
    command
        .arg("--pgdata")
        .arg(&folder.data)
        .args(["--host", &primary.ip().to_string()])
        .args(["--port", &primary.port().to_string()])
        .args(["--username", USER, "--no-password"])
        // Streams the WAL written during the copy, so the copy is consistent on its own;
        // fast checkpoint: the copy starts at once instead of at the next checkpoint.
        .args(["--wal-method", "stream", "--checkpoint", "fast"])
        .args(["--write-recovery-conf", "--no-sync"]);
    run_setup(
        command,
        folder,
        BASEBACKUP_LOG,
        account,
        &format!(
            "pg_basebackup from {primary} into {}",
            folder.data.display()
        ),
    )?;
    // postgres refuses a data folder others can read; pg_basebackup keeps the mode of a
    // folder that already existed.
    std::fs::set_permissions(&folder.data, std::fs::Permissions::from_mode(0o700))
}

/// One connection to the server at `addr` as [`USER`]; `None` when it does not answer.
async fn connect(addr: SocketAddr) -> Option<tokio_postgres::Client> {
    let mut config = tokio_postgres::Config::new();
    config
        .host(addr.ip().to_string())
        .port(addr.port())
        .user(USER)
        .dbname(DATABASE)
        .connect_timeout(Duration::from_secs(2));
    let (client, connection) = config.connect(tokio_postgres::NoTls).await.ok()?;
    tokio::spawn(connection);
    Some(client)
}

/// How many replicas the primary at `addr` streams WAL to right now (`state = 'streaming'`);
/// with `sync`, only those it waits for on commit (`sync_state = 'sync'`). 0 when it does not
/// answer.
pub async fn replicas_streaming(addr: SocketAddr, sync: bool) -> usize {
    let Some(client) = connect(addr).await else {
        return 0;
    };
    let query = "SELECT count(*) FROM pg_stat_replication \
                 WHERE state = 'streaming' AND (NOT $1 OR sync_state = 'sync')";
    match client.query_one(query, &[&sync]).await {
        Ok(row) => usize::try_from(row.get::<_, i64>(0)).unwrap_or(0),
        Err(_) => 0,
    }
}

/// Promotes the standby at `addr` and waits until it takes writes: it replays the WAL it
/// received, leaves recovery and starts a new timeline.
pub(super) async fn promote(addr: SocketAddr) -> Result<(), String> {
    let client = connect(addr)
        .await
        .ok_or_else(|| format!("connect to {addr}"))?;
    let row = client
        .query_one(
            "SELECT pg_promote(true, $1)",
            &[&i32::try_from(PROMOTE_WAIT_S).unwrap_or(60)],
        )
        .await
        .map_err(|e| format!("SELECT pg_promote() on {addr}: {e}"))?;
    if row.get::<_, bool>(0) {
        Ok(())
    } else {
        Err(format!(
            "pg_promote() on {addr}: not promoted within {PROMOTE_WAIT_S} s"
        ))
    }
}
