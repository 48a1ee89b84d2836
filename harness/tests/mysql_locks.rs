//! MariaDB under the supervisor and the MySQL lock clients against it behind the real proxy
//! (embedded Toxiproxy), one proxy per client: the server starts on an empty folder, pauses,
//! keeps durable commits across a kill, leaves nothing behind; each lock grants exclusively,
//! releases, and a cut link is `info`.

mod db_support;

use db_support::{proc_state, wait_not_running};
use lockpick_harness::client::{
    Grant, LockClient, LockSession, MyForUpdateLock, MyGetLock, MyLeaseRowLock, MySettings, Outcome,
};
use lockpick_harness::db::{mariadb_ready, MariaDbOptions, NodeKind, Supervisor};
use lockpick_harness::proxy::{EmbeddedToxiproxy, FaultProxies};
use lockpick_harness::scenario::MsRange;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

const LOCK: &str = "lock";
const OP_TIMEOUT_MS: u64 = 1000;
const SHORT: Duration = Duration::from_millis(150);
const LONG: Duration = Duration::from_secs(5);

struct Setup {
    _run: tempfile::TempDir,
    sup: Supervisor,
    _toxiproxy: EmbeddedToxiproxy,
    proxies: FaultProxies,
    a: SocketAddr,
    b: SocketAddr,
}

async fn setup(opts: MariaDbOptions) -> Setup {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let node = sup.start("my", NodeKind::MariaDb(opts)).await.unwrap();
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

fn granted(outcome: Outcome<Grant>) -> Grant {
    match outcome {
        Outcome::Ok(grant) => grant,
        other => panic!("expected a grant, got {other:?}"),
    }
}

async fn grants_exclusively<L: LockClient>(via_a: L, via_b: L) -> (Grant, Grant) {
    let mut a = via_a.connect(1).await.unwrap();
    let mut b = via_b.connect(2).await.unwrap();
    let first = granted(a.acquire("a", Instant::now() + LONG).await);
    assert_eq!(
        b.acquire("b", Instant::now() + SHORT).await,
        Outcome::Fail("timeout-waiting".to_owned()),
        "b got the lock while a held it"
    );
    assert_eq!(a.release(&first).await, Outcome::Ok(()));
    let second = granted(b.acquire("b", Instant::now() + LONG).await);
    assert_eq!(b.release(&second).await, Outcome::Ok(()));
    (first, second)
}

async fn cut_link_is_info<L: LockClient>(setup: &Setup, via_a: L) {
    let mut a = via_a.connect(1).await.unwrap();
    let grant = granted(a.acquire("a", Instant::now() + LONG).await);
    setup.proxies.down("a").await.unwrap();
    let released = a.release(&grant).await;
    assert!(matches!(released, Outcome::Info(_)), "{released:?}");
    setup.proxies.heal("a").await.unwrap();
}

async fn partitioned_acquire_is_info<L: LockClient>(setup: &Setup, via_a: L) {
    let mut a = via_a.connect(1).await.unwrap();
    setup.proxies.partition("a").await.unwrap();
    let outcome = a.acquire("a", Instant::now() + LONG).await;
    assert_eq!(outcome, Outcome::Info("timeout".to_owned()));
    setup.proxies.heal("a").await.unwrap();
}

fn delay() -> MsRange {
    MsRange::fixed(10)
}

#[tokio::test]
async fn mariadb_starts_pauses_and_leaves_nothing_behind() {
    let mut s = setup(MariaDbOptions::default()).await;
    let node = s.sup.node("my").unwrap();
    assert!(node.dir.join("my.cnf").exists());
    s.sup.pause("my").unwrap();
    assert_eq!(proc_state(node.pid), Some('T'));
    assert!(!mariadb_ready(node.addr, Duration::from_millis(300)).await);
    s.sup.resume("my").unwrap();
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
    let lock = |addr, ttl| {
        MyLeaseRowLock::new(
            addr,
            LOCK,
            ttl,
            OP_TIMEOUT_MS,
            delay(),
            &MySettings::default(),
        )
    };
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
    let lock = |addr| MyGetLock::new(addr, LOCK, OP_TIMEOUT_MS, delay(), &MySettings::default());
    let (first, second) = grants_exclusively(lock(s.a), lock(s.b)).await;
    assert!(second.token > first.token, "{first:?} then {second:?}");
    cut_link_is_info(&s, lock(s.a)).await;
    partitioned_acquire_is_info(&s, lock(s.a)).await;
}

#[tokio::test]
async fn for_update_grants_exclusively_without_token() {
    let s = setup(MariaDbOptions::default()).await;
    let lock =
        |addr| MyForUpdateLock::new(addr, LOCK, OP_TIMEOUT_MS, delay(), &MySettings::default());
    let (first, second) = grants_exclusively(lock(s.a), lock(s.b)).await;
    assert_eq!((first.token, second.token), (None, None));
    cut_link_is_info(&s, lock(s.a)).await;
    partitioned_acquire_is_info(&s, lock(s.a)).await;
}
