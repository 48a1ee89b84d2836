//! Starting a scenario's backend: its nodes under the supervisor (or a user's servers), a proxy
//! in front of each, and the lock client that reaches them through the proxies. Adding a
//! backend means a variant of [`Lock`], an arm in [`start_backend`], one in `Lock::new` and one
//! in [`Lock::spawn_clients`].

use super::error::RunError;
use crate::client::{
    run_client, ClientCtx, EtcdLock, LockClient, RedisLock, RedisNaiveLock, Redlock, SentinelLock,
    ZkLock,
};
use crate::cluster::{start_etcd_cluster, start_zk_cluster, ClusterNet};
use crate::db::{RedisOptions, Supervisor};
use crate::proxy::FaultProxies;
use crate::scenario::{BackendKind, Persistence, Scenario, ZK_TICK_MS};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::Mutex;
use tokio::task::JoinSet;

/// The lock client of a started backend.
pub(super) enum Lock {
    Redis(Arc<RedisLock>),
    RedisNaive(Arc<RedisNaiveLock>),
    Etcd(Arc<EtcdLock>),
    ZooKeeper(Arc<ZkLock>),
    Redlock(Arc<Redlock>),
    RedisSentinel(Arc<SentinelLock>),
}

/// A started backend: its lock client, and its peer network if it is a cluster.
pub(super) struct Backend {
    pub(super) lock: Lock,
    pub(super) cluster: Option<Arc<ClusterNet>>,
}

/// Starts the lock nodes of `scenario`, each behind a proxy named after the node, and returns
/// the client that reaches them through those proxies. With `external` addresses (one per
/// node, checked by [`Scenario::check_external`]) nothing is started: the proxies go in front
/// of those servers.
pub(super) async fn start_backend(
    scenario: &Scenario,
    supervisor: &Mutex<Supervisor>,
    proxies: &FaultProxies,
    external: &[SocketAddr],
) -> Result<Backend, RunError> {
    if !external.is_empty() {
        let mut addrs = Vec::new();
        for (node, addr) in scenario.node_names().iter().zip(external) {
            addrs.push(proxies.create(node, *addr).await?);
        }
        return Ok(Backend {
            lock: Lock::new(scenario, &addrs),
            cluster: None,
        });
    }
    if scenario.backend.is_cluster() {
        let names = scenario.node_names();
        let started = match scenario.backend {
            BackendKind::Etcd => start_etcd_cluster(supervisor, proxies, &names).await?,
            _ => start_zk_cluster(supervisor, proxies, &names, ZK_TICK_MS).await?,
        };
        return Ok(Backend {
            lock: Lock::new(scenario, &started.client_addrs),
            cluster: Some(Arc::new(started.net)),
        });
    }
    if scenario.backend == BackendKind::RedisSentinel {
        let lock =
            super::sentinel_backend::start_sentinel_backend(scenario, supervisor, proxies).await?;
        return Ok(Backend {
            lock: Lock::RedisSentinel(Arc::new(lock)),
            cluster: None,
        });
    }
    let mut lock_addrs = Vec::new();
    let redis_options = RedisOptions {
        aof: scenario.persistence == Persistence::AofAlways,
        faketime: scenario.has_clock_faults(),
        ..RedisOptions::default()
    };
    for node in scenario.node_names() {
        let info = supervisor
            .lock()
            .await
            .start_redis(&node, redis_options.clone())
            .await?;
        lock_addrs.push(proxies.create(&node, info.addr).await?);
    }
    Ok(Backend {
        lock: Lock::new(scenario, &lock_addrs),
        cluster: None,
    })
}

impl Lock {
    /// The lock client of `scenario`'s backend over the nodes at `addrs` (their proxies, in
    /// node order). Precondition: the backend is not `redis-sentinel`, whose client finds its
    /// master through the sentinels.
    fn new(scenario: &Scenario, addrs: &[SocketAddr]) -> Lock {
        let spec = &scenario.lock;
        match scenario.backend {
            BackendKind::Redis => Lock::Redis(Arc::new(RedisLock::new(
                addrs[0],
                &spec.name,
                spec.ttl_ms,
                spec.op_timeout_ms,
                spec.retry_delay_ms,
            ))),
            BackendKind::RedisNaive => Lock::RedisNaive(Arc::new(RedisNaiveLock::new(
                addrs[0],
                &spec.name,
                spec.op_timeout_ms,
                spec.retry_delay_ms,
            ))),
            BackendKind::Redlock => Lock::Redlock(Arc::new(Redlock::new(
                scenario
                    .node_names()
                    .into_iter()
                    .zip(addrs.to_vec())
                    .collect(),
                &spec.name,
                spec.ttl_ms,
                spec.op_timeout_ms,
                spec.retry_delay_ms,
            ))),
            BackendKind::Etcd => Lock::Etcd(Arc::new(EtcdLock::new(
                addrs,
                &spec.name,
                spec.ttl_ms,
                spec.op_timeout_ms,
                spec.retry_delay_ms,
            ))),
            BackendKind::ZooKeeper => Lock::ZooKeeper(Arc::new(ZkLock::new(
                addrs,
                &spec.name,
                spec.ttl_ms,
                spec.op_timeout_ms,
                spec.retry_delay_ms,
            ))),
            BackendKind::RedisSentinel => {
                unreachable!("redis-sentinel clients are built by start_sentinel_backend")
            }
        }
    }

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
            Lock::ZooKeeper(lock) => spawn(tasks, lock, clients, ctx),
            Lock::Redlock(lock) => spawn(tasks, lock, clients, ctx),
            Lock::RedisSentinel(lock) => spawn(tasks, lock, clients, ctx),
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
