//! A real three-member etcd cluster with its peer links behind lockpick's proxies: it elects a
//! leader, an isolated member really stops getting writes until healed, a new leader is
//! elected when the old one is cut off, and lock waiters each watch only their predecessor.

mod cluster_support;

use cluster_support::{one_at_a_time, Kind, Queue, Rig};
use etcd_client::{Client, GetOptions};
use lockpick_harness::backends::etcd::EtcdLock;
use lockpick_harness::scenario::MsRange;
use std::time::{Duration, Instant};

async fn rig() -> Rig {
    Rig::start(Kind::Etcd).await
}

/// A client of one member only, past its client proxy.
async fn client_of(rig: &Rig, name: &str) -> Client {
    Client::connect([format!("http://{}", rig.direct(name))], None)
        .await
        .unwrap()
}

/// The value of `key` as member `client` has applied it (serializable: no quorum asked).
async fn local_get(client: &mut Client, key: &str) -> Option<String> {
    let got = client
        .get(key, Some(GetOptions::new().with_serializable()))
        .await
        .unwrap();
    got.kvs()
        .first()
        .map(|kv| kv.value_str().unwrap().to_owned())
}

#[test]
fn cluster_has_one_leader_and_members_dial_each_other_through_the_routers() {
    one_at_a_time(|| async {
        let rig = rig().await;
        let leader = rig.leader().await;
        let mut leaders = 0;
        for name in &rig.names {
            if lockpick_harness::backends::etcd::etcd_is_leader(
                rig.direct(name),
                Duration::from_secs(1),
            )
            .await
            {
                leaders += 1;
                assert_eq!(*name, leader);
            }
        }
        assert_eq!(leaders, 1);
        // Every member's config names the routers, not the members' own peer ports.
        let args =
            std::fs::read_to_string(rig.supervisor.lock().await.node_dir("n1").join("etcd.args"))
                .unwrap();
        for name in &rig.names {
            let router = rig.cluster.net.peer_addr(name, "").unwrap();
            assert!(args.contains(&format!("{name}=http://{router}")), "{args}");
        }
    });
}

#[test]
fn an_isolated_member_gets_no_writes_until_healed() {
    one_at_a_time(|| async {
        let rig = rig().await;
        let leader = rig.leader().await;
        let follower = rig.names.iter().find(|n| **n != leader).unwrap().clone();
        let mut on_leader = client_of(&rig, &leader).await;
        let mut on_follower = client_of(&rig, &follower).await;
        on_leader.put("k", "before", None).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while local_get(&mut on_follower, "k").await.as_deref() != Some("before") {
            assert!(
                Instant::now() < deadline,
                "replication never reached {follower}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }

        rig.isolate(&follower).await;
        // The majority (leader + the other follower) still commits.
        on_leader.put("k", "during", None).await.unwrap();
        let watch_until = Instant::now() + Duration::from_millis(1500);
        while Instant::now() < watch_until {
            assert_eq!(
                local_get(&mut on_follower, "k").await.as_deref(),
                Some("before"),
                "the write reached isolated {follower}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }

        rig.heal(&follower).await;
        let deadline = Instant::now() + Duration::from_secs(10);
        while local_get(&mut on_follower, "k").await.as_deref() != Some("during") {
            assert!(
                Instant::now() < deadline,
                "{follower} never caught up after heal"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
}

#[test]
fn isolating_the_leader_makes_the_others_elect_a_new_one() {
    one_at_a_time(|| async {
        let rig = rig().await;
        let old = rig.leader().await;
        rig.isolate(&old).await;
        let others: Vec<String> = rig.names.iter().filter(|n| **n != old).cloned().collect();
        let cut_at = Instant::now();
        let deadline = cut_at + Duration::from_secs(10);
        let new = loop {
            if let Some(l) = rig.supervisor.lock().await.leader(&others).await {
                break l;
            }
            assert!(Instant::now() < deadline, "no new leader among {others:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        eprintln!(
            "new leader {new} {:?} after isolating {old}",
            cut_at.elapsed()
        );
        assert_ne!(new, old);
        rig.heal(&old).await;
    });
}

/// Sum over the members of the events etcd sent to watchers.
async fn watch_events_sent(rig: &Rig) -> u64 {
    let mut total = 0;
    for name in &rig.names {
        let url = format!("http://{}/metrics", rig.direct(name));
        let body = http_get(&url).await;
        let line = body
            .lines()
            .find(|l| l.starts_with("etcd_debugging_mvcc_events_total "))
            .unwrap_or_else(|| panic!("no events metric from {name}"));
        total += line
            .split_whitespace()
            .nth(1)
            .unwrap()
            .parse::<f64>()
            .unwrap() as u64;
    }
    total
}

async fn http_get(url: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_once('/').unwrap();
    let mut stream = tokio::net::TcpStream::connect(host).await.unwrap();
    stream
        .write_all(format!("GET /{path} HTTP/1.0\r\nHost: {host}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).await.unwrap();
    out
}

#[test]
fn a_release_wakes_only_the_next_waiter() {
    one_at_a_time(|| async {
        let rig = rig().await;
        let lock = EtcdLock::new(
            &rig.cluster.client_addrs,
            "herd",
            2000,
            1000,
            MsRange { min: 5, max: 10 },
        );
        let mut queue = Queue::form(&lock, "waiter-").await;
        let before = watch_events_sent(&rig).await;
        queue.release_to_first().await;
        let after = watch_events_sent(&rig).await;
        // One delete event, to the one waiter watching the owner's key; a herd would send one
        // to each of the four waiters.
        assert_eq!(after - before, 1, "watch events sent for one release");
        queue.later_waiters_still_wait();
    });
}
