//! A real three-member etcd cluster with its peer links behind lockpick's proxies: it elects a
//! leader, an isolated member really stops getting writes until healed, a new leader is
//! elected when the old one is cut off, and lock waiters each watch only their predecessor.

use etcd_client::{Client, GetOptions};
use lockpick_harness::client::{EtcdLock, LockClient, LockSession, Outcome};
use lockpick_harness::cluster::{start_etcd_cluster, EtcdCluster};
use lockpick_harness::db::Supervisor;
use lockpick_harness::proxy::{EmbeddedToxiproxy, FaultProxies};
use lockpick_harness::scenario::MsRange;
use std::net::SocketAddr;
use std::sync::Mutex as StdMutex;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

// Clusters are timing experiments on a 2-core machine: one at a time.
static SERIAL: StdMutex<()> = StdMutex::new(());

struct Rig {
    _dir: tempfile::TempDir,
    supervisor: Mutex<Supervisor>,
    _proxy: EmbeddedToxiproxy,
    cluster: EtcdCluster,
    names: Vec<String>,
}

async fn rig() -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let supervisor = Mutex::new(Supervisor::new(dir.path()));
    let proxy = EmbeddedToxiproxy::start(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let proxies = FaultProxies::new(proxy.api_addr()).expect("client thread");
    let names: Vec<String> = ["n1", "n2", "n3"].map(String::from).to_vec();
    let started = Instant::now();
    let cluster = start_etcd_cluster(&supervisor, &proxies, &names)
        .await
        .unwrap();
    eprintln!("etcd cluster ready in {:?}", started.elapsed());
    Rig {
        _dir: dir,
        supervisor,
        _proxy: proxy,
        cluster,
        names,
    }
}

impl Rig {
    async fn leader(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(l) = self.supervisor.lock().await.leader(&self.names).await {
                return l;
            }
            assert!(Instant::now() < deadline, "no leader within 10 s");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn direct(&self, name: &str) -> SocketAddr {
        self.cluster
            .members
            .iter()
            .find(|m| m.name == name)
            .unwrap()
            .addr
    }

    /// A client of one member only, past its client proxy.
    async fn client_of(&self, name: &str) -> Client {
        Client::connect([format!("http://{}", self.direct(name))], None)
            .await
            .unwrap()
    }
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
    let _guard = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let rig = rig().await;
        let leader = rig.leader().await;
        let mut leaders = 0;
        for name in &rig.names {
            if lockpick_harness::db::etcd_is_leader(rig.direct(name), Duration::from_secs(1)).await
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
    let _guard = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let rig = rig().await;
        let leader = rig.leader().await;
        let follower = rig.names.iter().find(|n| **n != leader).unwrap().clone();
        let mut on_leader = rig.client_of(&leader).await;
        let mut on_follower = rig.client_of(&follower).await;
        on_leader.put("k", "before", None).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while local_get(&mut on_follower, "k").await.as_deref() != Some("before") {
            assert!(
                Instant::now() < deadline,
                "replication never reached {follower}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }

        rig.cluster
            .net
            .isolate(std::slice::from_ref(&follower))
            .await
            .unwrap();
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

        rig.cluster
            .net
            .heal(std::slice::from_ref(&follower))
            .await
            .unwrap();
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
    let _guard = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let rig = rig().await;
        let old = rig.leader().await;
        rig.cluster
            .net
            .isolate(std::slice::from_ref(&old))
            .await
            .unwrap();
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
        rig.cluster
            .net
            .heal(std::slice::from_ref(&old))
            .await
            .unwrap();
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
    let _guard = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let rig = rig().await;
        let lock = EtcdLock::new(
            &rig.cluster.client_addrs,
            "herd",
            2000,
            1000,
            MsRange { min: 5, max: 10 },
        );
        let mut owner = lock.connect(1).await.unwrap();
        let far = Instant::now() + Duration::from_secs(30);
        let Outcome::Ok(grant) = owner.acquire("owner", far).await else {
            panic!("first acquire failed");
        };
        // Four waiters queue up behind the owner, in order.
        let mut waiters = Vec::new();
        for i in 0..4u64 {
            let mut session = lock.connect(10 + i).await.unwrap();
            waiters.push(tokio::spawn(async move {
                let got = session.acquire(&format!("waiter-{i}"), far).await;
                (i, got, session)
            }));
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let before = watch_events_sent(&rig).await;
        assert_eq!(owner.release(&grant).await, Outcome::Ok(()));
        // Kept: dropping the session would close it and free the lock for the next waiter.
        let (i, got, _first) = waiters.remove(0).await.unwrap();
        assert_eq!(i, 0);
        let Outcome::Ok(next) = got else {
            panic!("the first waiter did not get the lock: {got:?}")
        };
        assert!(next.token > grant.token, "{next:?} after {grant:?}");
        tokio::time::sleep(Duration::from_millis(300)).await;
        let after = watch_events_sent(&rig).await;
        // One delete event, to the one waiter watching the owner's key; a herd would send one
        // to each of the four waiters.
        assert_eq!(after - before, 1, "watch events sent for one release");
        for w in &waiters {
            assert!(!w.is_finished(), "a later waiter woke up");
        }
        for w in waiters {
            w.abort();
        }
    });
}
