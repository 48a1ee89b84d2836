//! The PostgreSQL lock clients against a real `postgres` behind the real proxy (embedded
//! Toxiproxy), one proxy per client so a fault can hit one holder's link: each lock grants
//! exclusively and releases, a cut link is `info`, and what each lock does when the server
//! loses or keeps a holder's session.

mod sql_support;

use lockpick_harness::backends::postgres::PgOptions;
use lockpick_harness::backends::postgres::{
    PgAdvisoryLock, PgForUpdateLock, PgLeaseRowLock, PgNode, PgSettings,
};
use lockpick_harness::client::{LockClient, LockSession, Outcome};
use lockpick_harness::processes::NodeKind;
use sql_support::{
    cut_link_is_info, delay, granted, grants_exclusively, partitioned_acquire_is_info, soon, Setup,
    LOCK, LONG, NO_LEASE, OP_TIMEOUT_MS,
};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

async fn setup(opts: PgOptions) -> Setup {
    sql_support::setup(NodeKind::from(opts)).await
}

/// The server at `addr` (a client's proxy) with the session settings.
fn node_with(addr: SocketAddr, settings: &PgSettings) -> Arc<PgNode> {
    Arc::new(PgNode::new(addr, LOCK, OP_TIMEOUT_MS, delay(), settings))
}

fn node(addr: SocketAddr) -> Arc<PgNode> {
    node_with(addr, &PgSettings::default())
}

fn lease_row(addr: SocketAddr, ttl_ms: u64) -> PgLeaseRowLock {
    PgLeaseRowLock::new(node(addr), ttl_ms)
}

fn advisory(addr: SocketAddr) -> PgAdvisoryLock {
    PgAdvisoryLock::new(node(addr), NO_LEASE)
}

fn for_update(addr: SocketAddr) -> PgForUpdateLock {
    PgForUpdateLock::new(node(addr), NO_LEASE)
}

#[tokio::test]
async fn lease_row_grants_exclusively_with_growing_tokens_and_cut_links_are_info() {
    let s = setup(PgOptions::default()).await;
    let (first, second) = grants_exclusively(lease_row(s.a, 10_000), lease_row(s.b, 10_000)).await;
    assert_eq!(first.lease_ms, Some(10_000));
    assert!(second.token > first.token, "{first:?} then {second:?}");
    cut_link_is_info(&s, lease_row(s.a, 10_000)).await;
    partitioned_acquire_is_info(&s, lease_row(s.a, 10_000)).await;
}

#[tokio::test]
async fn an_expired_lease_goes_to_the_next_holder_and_the_old_one_cannot_release_or_renew() {
    let s = setup(PgOptions::default()).await;
    let mut a = lease_row(s.a, 300).connect(1).await.unwrap();
    let mut b = lease_row(s.b, 300).connect(2).await.unwrap();
    let old = granted(a.acquire("a", Instant::now() + LONG).await);
    assert_eq!(a.renew(&old).await, Outcome::Ok(()));
    tokio::time::sleep(Duration::from_millis(400)).await;
    let new = granted(b.acquire("b", Instant::now() + LONG).await);
    assert!(new.token > old.token, "{old:?} then {new:?}");
    assert_eq!(a.renew(&old).await, Outcome::Fail("lost".to_owned()));
    assert_eq!(a.release(&old).await, Outcome::Fail("not-owner".to_owned()));
    assert_eq!(b.release(&new).await, Outcome::Ok(()));
}

#[tokio::test]
async fn advisory_grants_exclusively_with_growing_tokens_and_cut_links_are_info() {
    let s = setup(PgOptions::default()).await;
    let (first, second) = grants_exclusively(advisory(s.a), advisory(s.b)).await;
    assert_eq!(first.lease_ms, None);
    assert!(second.token > first.token, "{first:?} then {second:?}");
    cut_link_is_info(&s, advisory(s.a)).await;
    partitioned_acquire_is_info(&s, advisory(s.a)).await;
}

#[tokio::test]
async fn advisory_lock_stays_with_a_partitioned_holder_and_goes_when_the_server_drops_it() {
    // The holder's session asks the server to close it after 1 s idle, as a holder that is
    // paused or cut off is.
    let s = setup(PgOptions::default()).await;
    let settings = PgSettings {
        idle_session_timeout_ms: Some(1000),
        ..PgSettings::default()
    };
    let via_a = PgAdvisoryLock::new(node_with(s.a, &settings), NO_LEASE);
    let mut a = via_a.connect(1).await.unwrap();
    let mut b = advisory(s.b).connect(2).await.unwrap();
    let held = granted(a.acquire("a", Instant::now() + LONG).await);
    s.proxies.partition("a").await.unwrap();
    // Within the timeout the server still believes in a's session: b waits.
    assert!(matches!(b.acquire("b", soon()).await, Outcome::Fail(_)));
    // Past it, the server ends a's session and frees the lock while a still believes it
    // holds it (the partition hides the close from a).
    let taken = granted(b.acquire("b", Instant::now() + LONG).await);
    assert!(taken.token > held.token, "{held:?} then {taken:?}");
    s.proxies.heal("a").await.unwrap();
    let released = a.release(&held).await;
    assert!(matches!(released, Outcome::Info(_)), "{released:?}");
}

#[tokio::test]
async fn a_release_the_server_answers_by_ending_the_session_is_info_not_fail() {
    // The server ends a's idle session (FATAL 57P05) while a's release is on its way: the
    // session's locks went with it, so the release's outcome is unknown to the history
    // (`info`), never `fail` ("the lock is still held"), which would keep a holder that is
    // gone. Seen in the matrix under load, where a backend's timeout fired before it read a
    // release. Here the link is slowed so that the release arrives after the timeout, and the
    // error comes back while the release waits for its answer.
    let s = setup(PgOptions::default()).await;
    let settings = PgSettings {
        idle_session_timeout_ms: Some(500),
        ..PgSettings::default()
    };
    let node = Arc::new(PgNode::new(s.a, LOCK, 5_000, delay(), &settings));
    let mut a = PgAdvisoryLock::new(node, NO_LEASE)
        .connect(1)
        .await
        .unwrap();
    let held = granted(a.acquire("a", Instant::now() + LONG).await);
    s.proxies.slow("a", 700, 0).await.unwrap();
    let released = a.release(&held).await;
    match &released {
        Outcome::Info(e) => assert!(e.starts_with("session ended: 57P05"), "{released:?}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn for_update_grants_exclusively_without_token_and_cut_links_are_info() {
    let s = setup(PgOptions::default()).await;
    let (first, second) = grants_exclusively(for_update(s.a), for_update(s.b)).await;
    assert_eq!((first.token, second.token), (None, None));
    cut_link_is_info(&s, for_update(s.a)).await;
    partitioned_acquire_is_info(&s, for_update(s.a)).await;
}
