//! `redis-sentinel`: a master `n1`, replicas `n2`… whose replication link runs through the
//! proxy named after the replica (so the nemesis can delay or cut it), and three sentinels
//! `s1`…`s3` watching the master. Clients find the master through the sentinels
//! ([`Endpoints::sentinels`]) and talk to it directly; the proxy named `n1` carries no traffic.

use super::{BoxFuture, Capabilities, Endpoints, NodeRule, ServerKind, StartCtx, Started, Support};
use crate::client::{connect_redis, redis_request, Outcome};
use crate::db::{RedisOptions, SentinelOptions};
use crate::run::RunError;
use crate::scenario::Persistence;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// How many sentinels watch the master; two must agree it is down.
const SENTINELS: usize = 3;
/// Time for the replicas to sync and the sentinels to find the replicas and each other
/// (sentinels announce themselves every 2 s).
const SETTLE: Duration = Duration::from_secs(20);
/// The name under which the sentinels know the master.
pub const SENTINEL_MASTER: &str = "lockpick";
const MASTER_NAME: &str = SENTINEL_MASTER;

pub(super) struct RedisSentinel;

impl ServerKind for RedisSentinel {
    fn name(&self) -> &'static str {
        "redis-sentinel"
    }

    fn about(&self) -> &'static str {
        "a redis master n1 with asynchronous replicas n2…, failed over by three sentinels"
    }

    fn nodes(&self) -> NodeRule {
        // A master and at least one replica to fail over to.
        NodeRule {
            default: 2,
            min: 2,
            max: 5,
            odd: false,
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            signals: Ok(()),
            clock: Err(
                "its master, replicas and sentinels do not run under libfaketime (a sentinel's \
                 failure detector would see a clock jump as a fault of its own)",
            ),
            peers: Err("its replicas follow the master; they are not a consensus cluster"),
            external: Err("it needs sentinels and replicas lockpick starts"),
            failover: Err("its sentinels fail the master over by themselves (crash the master with node-crash)"),
        }
    }

    fn persistence(&self) -> Support {
        Ok(())
    }

    fn start<'a>(&'a self, ctx: StartCtx<'a>) -> BoxFuture<'a, Result<Started, RunError>> {
        Box::pin(start(ctx))
    }
}

async fn start(ctx: StartCtx<'_>) -> Result<Started, RunError> {
    let (supervisor, proxies, names) = (ctx.supervisor, ctx.proxies, &ctx.nodes);
    let base = RedisOptions {
        aof: ctx.persistence == Persistence::AofAlways,
        // Without this the first full sync waits 5 s for more replicas to join.
        extra_config: vec![("repl-diskless-sync-delay".into(), "0".into())],
        ..RedisOptions::default()
    };
    let master = supervisor
        .lock()
        .await
        .start_redis(&names[0], base.clone())
        .await?;
    let mut endpoints = Endpoints::default();
    // Only n1 is a client address: a replica's proxy carries its replication link.
    let n1 = proxies.create(&names[0], master.addr).await?;
    endpoints.nodes.push((names[0].clone(), n1));
    for replica in &names[1..] {
        let link = proxies.create(replica, master.addr).await?;
        let mut opts = base.clone();
        opts.extra_config
            .push(("replicaof".into(), format!("{} {}", link.ip(), link.port())));
        supervisor.lock().await.start_redis(replica, opts).await?;
    }
    let replicas = names.len() - 1;
    let deadline = Instant::now() + SETTLE;
    wait_for(deadline, "the replicas to sync with the master", || {
        replicas_synced(master.addr, replicas)
    })
    .await?;

    for i in 1..=SENTINELS {
        let info = supervisor
            .lock()
            .await
            .start(
                &format!("s{i}"),
                crate::db::NodeKind::new(SentinelOptions::new(master.addr)),
            )
            .await?;
        endpoints.sentinels.push(info.addr);
    }
    for s in &endpoints.sentinels {
        wait_for(
            deadline,
            "the sentinels to find the replicas and each other",
            || sentinel_ready(*s, replicas),
        )
        .await?;
    }
    Ok(Started {
        endpoints,
        cluster: None,
    })
}

async fn wait_for<F, Fut>(deadline: Instant, what: &str, mut check: F) -> Result<(), RunError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    loop {
        if check().await {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(RunError::Sentinel(format!(
                "wait {} s for {what}",
                SETTLE.as_secs()
            )));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One command to `addr` with a short time limit; `None` on any failure.
async fn ask<T: redis::FromRedisValue>(addr: SocketAddr, cmd: redis::Cmd) -> Option<T> {
    let limit = Duration::from_millis(500);
    let mut con = connect_redis(addr, limit).await.ok()?;
    match redis_request(limit, cmd.query_async::<T>(&mut con)).await {
        Outcome::Ok(v) => Some(v),
        _ => None,
    }
}

async fn replicas_synced(master: SocketAddr, replicas: usize) -> bool {
    let mut cmd = redis::cmd("INFO");
    cmd.arg("replication");
    let Some(info) = ask::<String>(master, cmd).await else {
        return false;
    };
    let online = info
        .lines()
        .filter(|l| l.starts_with("slave") && l.contains("state=online"))
        .count();
    online >= replicas
}

async fn sentinel_ready(sentinel: SocketAddr, replicas: usize) -> bool {
    let count = |sub: &'static str| {
        let mut cmd = redis::cmd("SENTINEL");
        cmd.arg(sub).arg(MASTER_NAME);
        ask::<Vec<redis::Value>>(sentinel, cmd)
    };
    let known_replicas = count("replicas").await.map_or(0, |v| v.len());
    let other_sentinels = count("sentinels").await.map_or(0, |v| v.len());
    known_replicas >= replicas && other_sentinels >= SENTINELS - 1
}
