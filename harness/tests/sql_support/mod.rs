//! What the SQL lock tests share: one database server under the supervisor with two proxies
//! in front of it (`a` and `b`, one per client, so a fault can hit one holder's link), and
//! the checks every SQL lock must pass: it grants exclusively, and a cut link is `info`.
#![allow(dead_code)] // each test file uses a different subset

use lockpick_harness::client::{Grant, LockClient, LockSession, Outcome};
use lockpick_harness::processes::{NodeKind, Supervisor};
use lockpick_harness::proxy::{EmbeddedToxiproxy, FaultProxies};
use lockpick_harness::scenario::MsRange;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

pub const LOCK: &str = "lock";
pub const OP_TIMEOUT_MS: u64 = 1000;
/// The lease length given to a lock without leases, which ignores it.
pub const NO_LEASE: u64 = 0;
pub const SHORT: Duration = Duration::from_millis(150);
pub const LONG: Duration = Duration::from_secs(5);

/// A running server (node `db`) with proxies `a` and `b` in front of it.
pub struct Setup {
    _run: tempfile::TempDir,
    pub sup: Supervisor,
    _toxiproxy: EmbeddedToxiproxy,
    pub proxies: FaultProxies,
    pub a: SocketAddr,
    pub b: SocketAddr,
}

pub async fn setup(kind: NodeKind) -> Setup {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let node = sup.start("db", kind).await.unwrap();
    let toxiproxy = EmbeddedToxiproxy::start("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let proxies = FaultProxies::new(toxiproxy.api_addr()).unwrap();
    let a = proxies.create("a", node.addr).await.unwrap();
    let b = proxies.create("b", node.addr).await.unwrap();
    Setup {
        _run: run,
        sup,
        _toxiproxy: toxiproxy,
        proxies,
        a,
        b,
    }
}

pub fn delay() -> MsRange {
    MsRange::fixed(10)
}

pub fn soon() -> Instant {
    Instant::now() + SHORT
}

pub fn granted(outcome: Outcome<Grant>) -> Grant {
    match outcome {
        Outcome::Ok(grant) => grant,
        other => panic!("expected a grant, got {other:?}"),
    }
}

/// `a` takes the lock, `b` cannot while `a` holds it, `a` releases, then `b` takes it.
pub async fn grants_exclusively<L: LockClient>(via_a: L, via_b: L) -> (Grant, Grant) {
    let mut a = via_a.connect(1).await.unwrap();
    let mut b = via_b.connect(2).await.unwrap();
    let first = granted(a.acquire("a", Instant::now() + LONG).await);
    assert_eq!(
        b.acquire("b", soon()).await,
        Outcome::Fail("timeout-waiting".to_owned()),
        "b got the lock while a held it"
    );
    assert_eq!(a.release(&first).await, Outcome::Ok(()));
    let second = granted(b.acquire("b", Instant::now() + LONG).await);
    assert_eq!(b.release(&second).await, Outcome::Ok(()));
    (first, second)
}

/// A holder whose link is taken down (its connection closed) gets `info` for its release.
pub async fn cut_link_is_info<L: LockClient>(setup: &Setup, via_a: L) {
    let mut a = via_a.connect(1).await.unwrap();
    let grant = granted(a.acquire("a", Instant::now() + LONG).await);
    setup.proxies.down("a").await.unwrap();
    let released = a.release(&grant).await;
    assert!(matches!(released, Outcome::Info(_)), "{released:?}");
    setup.proxies.heal("a").await.unwrap();
}

/// A holder whose link is partitioned while it sends the lock statement gets `info`.
pub async fn partitioned_acquire_is_info<L: LockClient>(setup: &Setup, via_a: L) {
    let mut a = via_a.connect(1).await.unwrap();
    setup.proxies.partition("a").await.unwrap();
    let outcome = a.acquire("a", Instant::now() + LONG).await;
    assert_eq!(outcome, Outcome::Info("timeout".to_owned()));
    setup.proxies.heal("a").await.unwrap();
}
