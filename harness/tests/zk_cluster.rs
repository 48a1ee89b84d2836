//! A real three-server ZooKeeper ensemble with quorum and election links behind lockpick's
//! proxies: it elects a leader, an isolated server stops serving and misses writes until
//! healed, and lock waiters each watch only their predecessor.

use lockpick_harness::client::{LockClient, LockSession, Outcome, ZkLock};
use lockpick_harness::cluster::{start_zk_cluster, ZkCluster};
use lockpick_harness::db::{zk_mode, Supervisor};
use lockpick_harness::proxy::{EmbeddedToxiproxy, FaultProxies};
use lockpick_harness::scenario::MsRange;
use std::net::SocketAddr;
use std::sync::Mutex as StdMutex;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

// Ensembles are timing experiments on a 2-core machine: one at a time.
static SERIAL: StdMutex<()> = StdMutex::new(());

pub struct Rig {
    _dir: tempfile::TempDir,
    pub supervisor: Mutex<Supervisor>,
    _proxy: EmbeddedToxiproxy,
    pub cluster: ZkCluster,
    pub names: Vec<String>,
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
    let cluster = start_zk_cluster(&supervisor, &proxies, &names, 250)
        .await
        .unwrap();
    eprintln!("zookeeper ensemble ready in {:?}", started.elapsed());
    Rig {
        _dir: dir,
        supervisor,
        _proxy: proxy,
        cluster,
        names,
    }
}

impl Rig {
    fn direct(&self, name: &str) -> SocketAddr {
        self.cluster
            .members
            .iter()
            .find(|m| m.name == name)
            .unwrap()
            .addr
    }

    async fn leader(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(l) = self.supervisor.lock().await.leader(&self.names).await {
                return l;
            }
            assert!(Instant::now() < deadline, "no leader within 15 s");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn client_of(&self, name: &str) -> zookeeper_client::Client {
        zookeeper_client::Client::connector()
            .with_session_timeout(Duration::from_secs(4))
            .connect(&self.direct(name).to_string())
            .await
            .unwrap()
    }
}

#[test]
fn ensemble_has_one_leader_and_two_followers() {
    let _guard = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    tokio::runtime::Runtime::new().unwrap().block_on(async {
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
    let _guard = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let rig = rig().await;
        let leader = rig.leader().await;
        let follower = rig.names.iter().find(|n| **n != leader).unwrap().clone();
        let on_leader = rig.client_of(&leader).await;
        let persistent = zookeeper_client::CreateMode::Persistent
            .with_acls(zookeeper_client::Acls::anyone_all());
        on_leader
            .create("/k", b"before", &persistent)
            .await
            .unwrap();

        rig.cluster
            .net
            .isolate(std::slice::from_ref(&follower))
            .await
            .unwrap();
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

        rig.cluster
            .net
            .heal(std::slice::from_ref(&follower))
            .await
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while zk_mode(rig.direct(&follower), Duration::from_secs(1))
            .await
            .as_deref()
            != Some("follower")
        {
            assert!(Instant::now() < deadline, "{follower} never rejoined");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let on_follower = rig.client_of(&follower).await;
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
    let _guard = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let rig = rig().await;
        let lock = ZkLock::new(
            &rig.cluster.client_addrs,
            "herd",
            4000,
            1000,
            MsRange { min: 5, max: 10 },
        );
        let far = Instant::now() + Duration::from_secs(30);
        let mut owner = lock.connect(1).await.unwrap();
        let Outcome::Ok(grant) = owner.acquire("owner", far).await else {
            panic!("first acquire failed");
        };
        let mut waiters = Vec::new();
        for i in 0..4u64 {
            let mut session = lock.connect(10 + i).await.unwrap();
            waiters.push(tokio::spawn(async move {
                let got = session.acquire(&format!("waiter{i}"), far).await;
                (i, got, session)
            }));
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        // Four waiters, four different nodes watched, one watch each: no herd on the owner.
        assert_eq!(watches(&rig).await, (4, 4));
        assert_eq!(owner.release(&grant).await, Outcome::Ok(()));
        // Kept: dropping the session would close it and free the lock for the next waiter.
        let (i, got, _first) = waiters.remove(0).await.unwrap();
        assert_eq!(i, 0);
        let Outcome::Ok(next) = got else {
            panic!("the first waiter did not get the lock: {got:?}")
        };
        assert!(next.token > grant.token, "{next:?} after {grant:?}");
        tokio::time::sleep(Duration::from_millis(300)).await;
        // The release fired one watch; the other three waiters still wait on theirs.
        assert_eq!(watches(&rig).await, (3, 3));
        for w in &waiters {
            assert!(!w.is_finished(), "a later waiter woke up");
        }
        for w in waiters {
            w.abort();
        }
    });
}
