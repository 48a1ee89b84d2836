//! A real three-member cluster for an integration test, its peer links behind an embedded
//! proxy (one cluster test at a time: the `clusters` test group of .config/nextest.toml); and
//! the queue of lock waiters the herd tests release.

// Each test binary that includes this module uses only part of it.
#![allow(dead_code)]

use lockpick_harness::backends::etcd::start_etcd_cluster;
use lockpick_harness::backends::zookeeper::start_zk_cluster;
use lockpick_harness::client::{Grant, LockClient, LockSession, Outcome};
use lockpick_harness::cluster::Cluster;
use lockpick_harness::processes::Supervisor;
use lockpick_harness::proxy::{EmbeddedToxiproxy, FaultProxies};
use std::future::Future;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

/// Runs `test` on a fresh runtime. Cluster tests run one at a time (they time elections on a
/// 2-core machine): the `clusters` test group of .config/nextest.toml.
pub fn one_at_a_time<F: Future>(test: impl FnOnce() -> F) -> F::Output {
    tokio::runtime::Runtime::new().unwrap().block_on(test())
}

/// Which cluster a [`Rig`] runs.
#[derive(Clone, Copy)]
pub enum Kind {
    Etcd,
    ZooKeeper { tick_ms: u64 },
}

/// A running cluster of members `n1`, `n2`, `n3`, removed when dropped.
pub struct Rig {
    _dir: tempfile::TempDir,
    pub supervisor: Mutex<Supervisor>,
    _proxy: EmbeddedToxiproxy,
    pub cluster: Cluster,
    pub names: Vec<String>,
    /// How long an election may take: ZooKeeper's is the slower.
    leader_within: Duration,
}

impl Rig {
    pub async fn start(kind: Kind) -> Rig {
        let dir = tempfile::tempdir().unwrap();
        let supervisor = Mutex::new(Supervisor::new(dir.path()));
        let proxy = EmbeddedToxiproxy::start(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .unwrap();
        let proxies = FaultProxies::new(proxy.api_addr()).expect("client thread");
        let names: Vec<String> = ["n1", "n2", "n3"].map(String::from).to_vec();
        let started = Instant::now();
        let cluster = match kind {
            Kind::Etcd => start_etcd_cluster(&supervisor, &proxies, &names).await,
            Kind::ZooKeeper { tick_ms } => {
                start_zk_cluster(&supervisor, &proxies, &names, tick_ms).await
            }
        }
        .unwrap();
        let (what, leader_within) = match kind {
            Kind::Etcd => ("etcd cluster", Duration::from_secs(10)),
            Kind::ZooKeeper { .. } => ("zookeeper ensemble", Duration::from_secs(15)),
        };
        eprintln!("{what} ready in {:?}", started.elapsed());
        Rig {
            _dir: dir,
            supervisor,
            _proxy: proxy,
            cluster,
            names,
            leader_within,
        }
    }

    /// The member the supervisor finds leading, waiting for an election if need be.
    pub async fn leader(&self) -> String {
        let within = self.leader_within;
        let deadline = Instant::now() + within;
        loop {
            if let Some(l) = self.supervisor.lock().await.leader(&self.names).await {
                return l;
            }
            assert!(
                Instant::now() < deadline,
                "no leader within {} s",
                within.as_secs()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Cuts every peer link between member `name` and the others.
    pub async fn isolate(&self, name: &str) {
        self.cluster.net.isolate(&[name.to_owned()]).await.unwrap();
    }

    /// Restores the peer links [`Rig::isolate`] cut.
    pub async fn heal(&self, name: &str) {
        self.cluster.net.heal(&[name.to_owned()]).await.unwrap();
    }

    /// The client address of member `name`, past its client proxy.
    pub fn direct(&self, name: &str) -> SocketAddr {
        self.cluster
            .members
            .iter()
            .find(|m| m.name == name)
            .unwrap()
            .addr
    }
}

type Waiter<S> = JoinHandle<(u64, Outcome<Grant>, S)>;

/// An owner holding the lock and four waiters queued up behind it, in order.
pub struct Queue<S> {
    owner: S,
    grant: Grant,
    waiters: Vec<Waiter<S>>,
    // Kept: dropping the session would close it and free the lock for the next waiter.
    first: Option<S>,
}

impl<S: LockSession> Queue<S> {
    /// Takes the lock as `owner`, then queues four waiters (`{prefix}0` …) 150 ms apart and
    /// gives them 300 ms more to settle.
    pub async fn form<L: LockClient<Session = S>>(lock: &L, prefix: &str) -> Queue<S> {
        let mut owner = lock.connect(1).await.unwrap();
        let far = Instant::now() + Duration::from_secs(30);
        let Outcome::Ok(grant) = owner.acquire("owner", far).await else {
            panic!("first acquire failed");
        };
        let mut waiters = Vec::new();
        for i in 0..4u64 {
            let mut session = lock.connect(10 + i).await.unwrap();
            let holder = format!("{prefix}{i}");
            waiters.push(tokio::spawn(async move {
                let got = session.acquire(&holder, far).await;
                (i, got, session)
            }));
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        Queue {
            owner,
            grant,
            waiters,
            first: None,
        }
    }

    /// Releases the owner's lock, asserts the first waiter gets it with a greater token, and
    /// gives the release 300 ms to reach anyone else.
    pub async fn release_to_first(&mut self) {
        assert_eq!(self.owner.release(&self.grant).await, Outcome::Ok(()));
        let (i, got, first) = self.waiters.remove(0).await.unwrap();
        self.first = Some(first);
        assert_eq!(i, 0);
        let Outcome::Ok(next) = got else {
            panic!("the first waiter did not get the lock: {got:?}")
        };
        assert!(
            next.token > self.grant.token,
            "{next:?} after {:?}",
            self.grant
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }

    /// Asserts the other waiters still wait, then stops them.
    pub fn later_waiters_still_wait(self) {
        for w in &self.waiters {
            assert!(!w.is_finished(), "a later waiter woke up");
        }
        for w in self.waiters {
            w.abort();
        }
    }
}
