//! MariaDB under the supervisor and the MySQL lock clients against it behind the real proxy
//! (embedded Toxiproxy), one proxy per client: the server starts on an empty folder, pauses
//! and leaves nothing behind; each lock grants exclusively,
//! releases, and a cut link is `info`.

mod processes_support;
mod sql_support;

use lockpick_harness::backends::mariadb::{mariadb_ready, MariaDbOptions};
use lockpick_harness::backends::mariadb::{
    MyForUpdateLock, MyGetLock, MyLeaseRowLock, MyNode, MySettings,
};
use lockpick_harness::client::{LockClient, LockSession, Outcome};
use lockpick_harness::processes::NodeKind;
use processes_support::{proc_state, wait_not_running};
use sql_support::{
    cut_link_is_info, delay, granted, grants_exclusively, partitioned_acquire_is_info, Setup, LOCK,
    LONG, NO_LEASE, OP_TIMEOUT_MS,
};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

async fn setup(opts: MariaDbOptions) -> Setup {
    sql_support::setup(NodeKind::from(opts)).await
}

/// The server at `addr` (a client's proxy), default session settings.
fn node(addr: SocketAddr) -> Arc<MyNode> {
    Arc::new(MyNode::new(
        addr,
        LOCK,
        OP_TIMEOUT_MS,
        delay(),
        &MySettings::default(),
    ))
}

#[tokio::test]
async fn mariadb_starts_pauses_and_leaves_nothing_behind() {
    let mut s = setup(MariaDbOptions::default()).await;
    let node = s.sup.node("db").unwrap();
    assert!(node.dir.join("my.cnf").exists());
    s.sup.pause("db").unwrap();
    assert_eq!(proc_state(node.pid), Some('T'));
    assert!(!mariadb_ready(node.addr, Duration::from_millis(300)).await);
    s.sup.resume("db").unwrap();
    assert!(mariadb_ready(node.addr, LONG).await);
    let pid = node.pid;
    drop(s);
    assert!(
        wait_not_running(pid, LONG),
        "mariadbd outlived the supervisor"
    );
}

#[tokio::test]
async fn lease_row_grants_exclusively_with_growing_ids_and_expires() {
    let s = setup(MariaDbOptions::default()).await;
    let lock = |addr, ttl| MyLeaseRowLock::new(node(addr), ttl);
    let (first, second) = grants_exclusively(lock(s.a, 10_000), lock(s.b, 10_000)).await;
    assert!(second.token > first.token, "{first:?} then {second:?}");
    // An expired lease goes to the next holder; the old one can neither renew nor release.
    let mut a = lock(s.a, 300).connect(1).await.unwrap();
    let mut b = lock(s.b, 300).connect(2).await.unwrap();
    let old = granted(a.acquire("a", Instant::now() + LONG).await);
    assert_eq!(a.renew(&old).await, Outcome::Ok(()));
    tokio::time::sleep(Duration::from_millis(400)).await;
    let new = granted(b.acquire("b", Instant::now() + LONG).await);
    assert!(new.token > old.token, "{old:?} then {new:?}");
    assert_eq!(a.renew(&old).await, Outcome::Fail("lost".to_owned()));
    assert_eq!(a.release(&old).await, Outcome::Fail("not-owner".to_owned()));
    assert_eq!(b.release(&new).await, Outcome::Ok(()));
    cut_link_is_info(&s, lock(s.a, 10_000)).await;
    partitioned_acquire_is_info(&s, lock(s.a, 10_000)).await;
}

#[tokio::test]
async fn get_lock_grants_exclusively_with_growing_tokens() {
    let s = setup(MariaDbOptions::default()).await;
    let lock = |addr| MyGetLock::new(node(addr), NO_LEASE);
    let (first, second) = grants_exclusively(lock(s.a), lock(s.b)).await;
    assert!(second.token > first.token, "{first:?} then {second:?}");
    cut_link_is_info(&s, lock(s.a)).await;
    partitioned_acquire_is_info(&s, lock(s.a)).await;
}

#[tokio::test]
async fn for_update_grants_exclusively_without_token() {
    let s = setup(MariaDbOptions::default()).await;
    let lock = |addr| MyForUpdateLock::new(node(addr), NO_LEASE);
    let (first, second) = grants_exclusively(lock(s.a), lock(s.b)).await;
    assert_eq!((first.token, second.token), (None, None));
    cut_link_is_info(&s, lock(s.a)).await;
    partitioned_acquire_is_info(&s, lock(s.a)).await;
}
