//! The Redlock client against five real redis-server masters (no proxy): what a failed
//! majority leaves behind, and what a granted lock records.

mod processes_support;

use lockpick_harness::backends::redis::RedisOptions;
use lockpick_harness::backends::redis::Redlock;
use lockpick_harness::client::{LockClient, LockSession, Outcome};
use lockpick_harness::processes::Supervisor;
use lockpick_harness::scenario::MsRange;
use processes_support::command;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

const KEY: &str = "lockpick:lock:lock";
const T: Duration = Duration::from_secs(2);

async fn masters(sup: &mut Supervisor, n: usize) -> Vec<(String, SocketAddr)> {
    let mut out = Vec::new();
    for i in 1..=n {
        let name = format!("n{i}");
        let info = sup
            .start_redis(&name, RedisOptions::default())
            .await
            .unwrap();
        out.push((name, info.addr));
    }
    out
}

/// A Redlock over `nodes` for the one lock "lock".
fn one_lock(nodes: &[(String, SocketAddr)], ttl_ms: u64) -> Redlock {
    let names = ["lock".to_owned()];
    Redlock::new(nodes.to_vec(), &names, ttl_ms, 100, MsRange::fixed(10))
}

fn get(addr: SocketAddr) -> String {
    command(addr, &["GET", KEY], T).unwrap()
}

#[tokio::test]
async fn failed_majority_releases_the_key_on_every_master_it_set() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let nodes = masters(&mut sup, 5).await;
    // Someone else holds n1..n3: only n4 and n5 can say OK, a minority.
    for (_, addr) in &nodes[..3] {
        let reply = command(*addr, &["SET", KEY, "other", "PX", "60000"], T).unwrap();
        assert!(reply.starts_with("+OK"), "{reply}");
    }
    let lock = one_lock(&nodes, 1000);
    let mut session = lock.connect(1).await.unwrap();
    let outcome = session
        .acquire("me", Instant::now() + Duration::from_millis(50))
        .await;
    assert_eq!(outcome, Outcome::Fail("timeout-waiting".to_owned()));
    let detail = session.last_detail();
    let answers: Vec<&str> = detail.per_node.values().map(String::as_str).collect();
    assert_eq!(
        answers,
        ["taken", "taken", "taken", "ok", "ok"],
        "{detail:?}"
    );
    // The two masters that said OK were released; the other holder's keys are untouched.
    for (name, addr) in &nodes[3..] {
        assert_eq!(get(*addr), "$-1\r\n", "{name} still has our key");
    }
    for (name, addr) in &nodes[..3] {
        assert_eq!(
            get(*addr),
            "$5\r\nother\r\n",
            "{name} lost the other holder's key"
        );
    }
}

#[tokio::test]
async fn majority_with_one_master_down_grants_without_token_and_records_validity() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let nodes = masters(&mut sup, 5).await;
    sup.kill("n2").await.unwrap();
    sup.kill("n4").await.unwrap();
    let lock = one_lock(&nodes, 1000);
    let mut session = lock.connect(1).await.unwrap();
    let Outcome::Ok(grant) = session.acquire("me", Instant::now() + T).await else {
        panic!("three of five masters are up: the lock must be granted");
    };
    assert_eq!(grant.token, None, "Redlock has no fencing token");
    assert_eq!(grant.lease_ms, Some(988), "ttl − 1 % − 2 ms");
    let detail = session.last_detail();
    assert_eq!(detail.per_node["n1"], "ok");
    assert!(detail.per_node["n2"].starts_with("fail"), "{detail:?}");
    let validity = detail.validity_ms.unwrap();
    assert!((900..=988).contains(&validity), "{validity}");
    for i in [0, 2, 4] {
        assert_eq!(get(nodes[i].1), "$2\r\nme\r\n");
    }
    assert_eq!(session.release(&grant).await, Outcome::Ok(()));
    for i in [0, 2, 4] {
        assert_eq!(get(nodes[i].1), "$-1\r\n");
    }
    // A bare minority left: no grant.
    sup.kill("n5").await.unwrap();
    let outcome = session
        .acquire("me", Instant::now() + Duration::from_millis(30))
        .await;
    assert!(matches!(outcome, Outcome::Fail(_)), "{outcome:?}");
    assert_eq!(get(nodes[0].1), "$-1\r\n", "released after the failed try");
}

#[tokio::test]
async fn extend_renews_the_key_on_a_majority_and_fails_once_it_is_gone() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let nodes = masters(&mut sup, 3).await;
    let lock = one_lock(&nodes, 400);
    let mut session = lock.connect(1).await.unwrap();
    let Outcome::Ok(grant) = session.acquire("me", Instant::now() + T).await else {
        panic!("all masters up: granted");
    };
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert_eq!(session.renew(&grant).await, Outcome::Ok(()));
    for (name, addr) in &nodes {
        let pttl = command(*addr, &["PTTL", KEY], T).unwrap();
        let left: i64 = pttl.trim_start_matches(':').trim().parse().unwrap();
        assert!(left > 300, "{name}: extended to 400 ms, {left} left");
    }
    // Someone else's key on two of three masters: the extend cannot reach a majority.
    for (_, addr) in &nodes[..2] {
        command(*addr, &["SET", KEY, "other", "PX", "60000"], T).unwrap();
    }
    assert_eq!(
        session.renew(&grant).await,
        Outcome::Fail("lost".to_owned())
    );
}

#[tokio::test]
async fn sessions_on_different_locks_hold_them_at_once_and_on_one_lock_exclude_each_other() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let nodes = masters(&mut sup, 3).await;
    let names = ["lock-0".to_owned(), "lock-1".to_owned()];
    let lock = Redlock::new(nodes.clone(), &names, 5000, 100, MsRange::fixed(10));
    let (mut a, mut b) = (
        lock.connect(1).await.unwrap(),
        lock.connect(2).await.unwrap(),
    );
    let soon = || Instant::now() + Duration::from_millis(100);
    a.select_lock(0);
    b.select_lock(1);
    let held_a = a.acquire("a", soon()).await;
    assert!(matches!(held_a, Outcome::Ok(_)), "{held_a:?}");
    let held_b = b.acquire("b", soon()).await;
    assert!(
        matches!(held_b, Outcome::Ok(_)),
        "another lock is free: {held_b:?}"
    );
    for (_, addr) in &nodes {
        assert_eq!(
            command(*addr, &["GET", "lockpick:lock:lock-0"], T).unwrap(),
            "$1\r\na\r\n"
        );
        assert_eq!(
            command(*addr, &["GET", "lockpick:lock:lock-1"], T).unwrap(),
            "$1\r\nb\r\n"
        );
    }
    // On a's lock, b waits in vain; released, b gets it.
    b.select_lock(0);
    let Outcome::Ok(grant_a) = held_a else {
        unreachable!()
    };
    assert_eq!(
        b.acquire("b", soon()).await,
        Outcome::Fail("timeout-waiting".to_owned())
    );
    assert_eq!(a.release(&grant_a).await, Outcome::Ok(()));
    assert!(matches!(b.acquire("b", soon()).await, Outcome::Ok(_)));
    sup.stop_all().await;
}
