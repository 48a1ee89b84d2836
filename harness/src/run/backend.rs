//! Starting a scenario's backend: its nodes under the supervisor, a proxy in front of each, and
//! the lock client that reaches them through the proxies. Adding a backend means a variant of
//! [`Lock`], an arm in [`start_backend`] and one in [`Lock::spawn_clients`].

use super::error::RunError;
use crate::client::{run_client, ClientCtx, EtcdLock, LockClient, RedisLock, RedisNaiveLock};
use crate::cluster::{ClusterNet, MemberPorts};
use crate::db::{
    reserve_port, DbError, EtcdOptions, MemberSpec, NodeKind, RedisOptions, Supervisor,
};
use crate::proxy::FaultProxies;
use crate::scenario::{BackendKind, Scenario};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::Mutex;
use tokio::task::JoinSet;

/// The lock client of a started backend.
pub(super) enum Lock {
    Redis(Arc<RedisLock>),
    RedisNaive(Arc<RedisNaiveLock>),
    Etcd(Arc<EtcdLock>),
}

/// A started backend: its lock client, and its peer network if it is a cluster.
pub(super) struct Backend {
    pub(super) lock: Lock,
    pub(super) cluster: Option<Arc<ClusterNet>>,
}

/// Starts the lock nodes of `scenario`, each behind a proxy named after the node, and returns
/// the client that reaches them through those proxies.
pub(super) async fn start_backend(
    scenario: &Scenario,
    supervisor: &Mutex<Supervisor>,
    proxies: &FaultProxies,
) -> Result<Backend, RunError> {
    if scenario.backend == BackendKind::Etcd {
        let (addrs, cluster) = start_etcd(scenario, supervisor, proxies).await?;
        let spec = &scenario.lock;
        let lock = Lock::Etcd(Arc::new(EtcdLock::new(
            &addrs,
            &spec.name,
            spec.ttl_ms,
            spec.op_timeout_ms,
            spec.retry_delay_ms,
        )));
        return Ok(Backend {
            lock,
            cluster: Some(Arc::new(cluster)),
        });
    }
    let mut lock_addrs = Vec::new();
    for node in scenario.node_names() {
        let info = supervisor
            .lock()
            .await
            .start_redis(&node, RedisOptions::default())
            .await?;
        lock_addrs.push(proxies.create(&node, info.addr).await?);
    }
    let spec = &scenario.lock;
    let lock = match scenario.backend {
        BackendKind::Redis => Lock::Redis(Arc::new(RedisLock::new(
            lock_addrs[0],
            &spec.name,
            spec.ttl_ms,
            spec.op_timeout_ms,
            spec.retry_delay_ms,
        ))),
        BackendKind::RedisNaive => Lock::RedisNaive(Arc::new(RedisNaiveLock::new(
            lock_addrs[0],
            &spec.name,
            spec.op_timeout_ms,
            spec.retry_delay_ms,
        ))),
        BackendKind::Etcd => unreachable!("started above"),
    };
    Ok(Backend {
        lock,
        cluster: None,
    })
}

/// Starts an etcd cluster of the scenario's members: peer ports reserved, the peer network
/// (routers and link proxies) built in front of them, the members started together, then one
/// client proxy per member, named after it. Returns the client proxy addresses.
async fn start_etcd(
    scenario: &Scenario,
    supervisor: &Mutex<Supervisor>,
    proxies: &FaultProxies,
) -> Result<(Vec<SocketAddr>, ClusterNet), RunError> {
    let names = scenario.node_names();
    let mut supervisor = supervisor.lock().await;
    let reserve = |name: &str| {
        reserve_port().map_err(|source| DbError::Port {
            node: name.to_owned(),
            source,
        })
    };
    let mut reserved = Vec::new();
    let mut members = Vec::new();
    for name in &names {
        let (client, peer) = (reserve(name)?, reserve(name)?);
        members.push(MemberPorts {
            name: name.clone(),
            dir: supervisor.node_dir(name),
            ports: vec![(String::new(), peer.port())],
        });
        reserved.push((name.clone(), client, peer));
    }
    let net = ClusterNet::create(proxies, &members).await?;
    let cluster: Vec<(String, SocketAddr)> = names
        .iter()
        .map(|n| {
            (
                n.clone(),
                net.peer_addr(n, "").expect("a router per member"),
            )
        })
        .collect();
    let specs = reserved
        .into_iter()
        .map(|(name, client, peer)| MemberSpec {
            kind: NodeKind::Etcd(EtcdOptions::member(&name, peer.port(), cluster.clone())),
            name,
            client,
            other_ports: vec![peer],
        })
        .collect();
    let infos = supervisor.start_cluster(specs).await?;
    drop(supervisor);
    let mut addrs = Vec::new();
    for info in infos {
        addrs.push(proxies.create(&info.name, info.addr).await?);
    }
    Ok((addrs, net))
}

impl Lock {
    /// Spawns `clients` client loops on `tasks`.
    pub(super) fn spawn_clients(
        &self,
        tasks: &mut JoinSet<()>,
        clients: usize,
        ctx: impl Fn(usize) -> ClientCtx,
    ) {
        match self {
            Lock::Redis(lock) => spawn(tasks, lock, clients, ctx),
            Lock::RedisNaive(lock) => spawn(tasks, lock, clients, ctx),
            Lock::Etcd(lock) => spawn(tasks, lock, clients, ctx),
        }
    }
}

fn spawn<L: LockClient>(
    tasks: &mut JoinSet<()>,
    lock: &Arc<L>,
    clients: usize,
    ctx: impl Fn(usize) -> ClientCtx,
) {
    for index in 0..clients {
        tasks.spawn(run_client(lock.clone(), ctx(index)));
    }
}
