//! A real three-server ZooKeeper ensemble with quorum and election links behind lockpick's
//! proxies: it elects a leader, an isolated server stops serving and misses writes until
//! healed, and lock waiters each watch only their predecessor.

mod cluster_support;

use cluster_support::{one_at_a_time, Kind, Queue, Rig};
use lockpick_harness::backends::zookeeper::zk_mode;
use lockpick_harness::backends::zookeeper::ZkLock;
use lockpick_harness::scenario::MsRange;
use std::time::{Duration, Instant};

async fn rig() -> Rig {
    Rig::start(Kind::ZooKeeper { tick_ms: 250 }).await
}

async fn client_of(rig: &Rig, name: &str) -> zookeeper_client::Client {
    zookeeper_client::Client::connector()
        .with_session_timeout(Duration::from_secs(4))
        .connect(&rig.direct(name).to_string())
        .await
        .unwrap()
}

#[test]
fn ensemble_has_one_leader_and_two_followers() {
    one_at_a_time(|| async {
        let rig = rig().await;
        let leader = rig.leader().await;
        let mut modes = Vec::new();
        for name in &rig.names {
            modes.push(zk_mode(rig.direct(name), Duration::from_secs(2)).await);
        }
        let leaders = modes
            .iter()
            .filter(|m| m.as_deref() == Some("leader"))
            .count();
        let followers = modes
            .iter()
            .filter(|m| m.as_deref() == Some("follower"))
            .count();
        assert_eq!((leaders, followers), (1, 2), "{modes:?}");
        assert_eq!(
            zk_mode(rig.direct(&leader), Duration::from_secs(2))
                .await
                .as_deref(),
            Some("leader")
        );
    });
}

#[test]
fn an_isolated_server_stops_serving_and_misses_writes_until_healed() {
    one_at_a_time(|| async {
        let rig = rig().await;
        let leader = rig.leader().await;
        let follower = rig.names.iter().find(|n| **n != leader).unwrap().clone();
        let on_leader = client_of(&rig, &leader).await;
        let persistent = zookeeper_client::CreateMode::Persistent
            .with_acls(zookeeper_client::Acls::anyone_all());
        on_leader
            .create("/k", b"before", &persistent)
            .await
            .unwrap();

        rig.isolate(&follower).await;
        on_leader.set_data("/k", b"during", None).await.unwrap();
        // Cut off from the leader, the follower gives up its role and serves nobody.
        let deadline = Instant::now() + Duration::from_secs(10);
        while zk_mode(rig.direct(&follower), Duration::from_secs(1))
            .await
            .is_some()
        {
            assert!(
                Instant::now() < deadline,
                "{follower} kept serving while isolated"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let (data, _) = on_leader.get_data("/k").await.unwrap();
        assert_eq!(data, b"during");

        rig.heal(&follower).await;
        let deadline = Instant::now() + Duration::from_secs(20);
        while zk_mode(rig.direct(&follower), Duration::from_secs(1))
            .await
            .as_deref()
            != Some("follower")
        {
            assert!(Instant::now() < deadline, "{follower} never rejoined");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let on_follower = client_of(&rig, &follower).await;
        on_follower.sync("/k").await.unwrap();
        let (data, _) = on_follower.get_data("/k").await.unwrap();
        assert_eq!(data, b"during", "{follower} caught up after heal");
    });
}

/// Distinct watched paths and total watches over all servers, from `wchs`.
async fn watches(rig: &Rig) -> (u64, u64) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (mut paths, mut total) = (0, 0);
    for name in &rig.names {
        let mut stream = tokio::net::TcpStream::connect(rig.direct(name))
            .await
            .unwrap();
        stream.write_all(b"wchs").await.unwrap();
        let mut out = String::new();
        stream.read_to_string(&mut out).await.unwrap();
        // "1 connections watching 1 paths\nTotal watches:1"
        let number_before = |word: &str| -> u64 {
            let words: Vec<&str> = out.split_whitespace().collect();
            let at = words
                .iter()
                .position(|w| *w == word)
                .unwrap_or_else(|| panic!("{out}"));
            words[at - 1].parse().unwrap()
        };
        paths += number_before("paths");
        total += out
            .split("Total watches:")
            .nth(1)
            .unwrap_or_else(|| panic!("{out}"))
            .trim()
            .parse::<u64>()
            .unwrap();
    }
    (paths, total)
}

#[test]
fn each_waiter_watches_only_its_predecessor() {
    one_at_a_time(|| async {
        let rig = rig().await;
        let lock = ZkLock::new(
            &rig.cluster.client_addrs,
            "herd",
            4000,
            1000,
            MsRange { min: 5, max: 10 },
        );
        let mut queue = Queue::form(&lock, "waiter").await;
        // Four waiters, four different nodes watched, one watch each: no herd on the owner.
        assert_eq!(watches(&rig).await, (4, 4));
        queue.release_to_first().await;
        // The release fired one watch; the other three waiters still wait on theirs.
        assert_eq!(watches(&rig).await, (3, 3));
        queue.later_waiters_still_wait();
    });
}

#[test]
fn a_dropped_session_keeps_its_lock_node_until_zookeeper_expires_it() {
    // What `client-crash` does to a built-in client: its session is dropped, as a killed
    // process's is. A killed process sends no CloseSession, so its lock node lives until
    // ZooKeeper expires the session (here 2 s); a session closed on drop deleted it at once,
    // and a rival was granted the lock milliseconds after the "crash".
    one_at_a_time(|| async {
        use lockpick_harness::client::{LockClient, LockSession, Outcome};
        let rig = rig().await;
        let lock = ZkLock::new(
            &rig.cluster.client_addrs,
            "dropped",
            2000,
            1000,
            MsRange { min: 5, max: 10 },
        );
        let mut holder = lock.connect(1).await.unwrap();
        let far = Instant::now() + Duration::from_secs(10);
        let Outcome::Ok(_) = holder.acquire("holder", far).await else {
            panic!("acquire failed");
        };
        let watcher = client_of(&rig, &rig.names[0]).await;
        let nodes = || async { watcher.list_children("/locks/dropped").await.unwrap().len() };
        assert_eq!(nodes().await, 1);
        let dropped = Instant::now();
        drop(holder);
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(nodes().await, 1, "the node went with the dropped session");
        // And ZooKeeper does expire it, within the session timeout and a tick or two.
        while nodes().await == 1 {
            assert!(dropped.elapsed() < Duration::from_secs(5), "never expired");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
}
