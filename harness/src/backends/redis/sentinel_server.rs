//! `redis-sentinel`: a master `n1`, replicas `n2`… and three sentinels `s1`…`s3` watching the
//! master. Every connection to a node runs through lockpick's proxies
//! ([`crate::backends::redis::start_redis_replicas`]): a replica's replication link through
//! `n2-to-n1`, a sentinel's link through `s1-to-n1`, a client's through `n1`. So `partition` and
//! `latency` on `n1` reach the clients' links to it, `isolate` on `n1` cuts it off from the
//! replicas and sentinels while clients still reach it (the split brain), and a fault on a
//! link names it (`links = ["n2-to-n1"]`). Clients find the master through the sentinels
//! ([`Endpoints::sentinels`], with the name they know the master by), which they reach
//! directly, and which answer routed addresses.

use crate::backends::redis::start_redis_replicas;
use crate::backends::redis::{RedisOptions, SentinelOptions};
use crate::server::StartError;
use crate::server::{
    BoxFuture, Cannot, Capabilities, Endpoints, NodeRule, Sentinels, ServerKind, StartCtx, Started,
    Support,
};
use crate::vocab::Outcome;
use crate::vocab::Persistence;
use crate::wire::redis::{connect as connect_redis, request as redis_request};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The sentinels that watch the master; two must agree it is down.
const SENTINELS: &[&str] = &["s1", "s2", "s3"];
/// Time for the replicas to sync and the sentinels to find the replicas and each other
/// (sentinels announce themselves every 2 s).
const SETTLE: Duration = Duration::from_secs(20);
/// How often each sentinel reads every node's INFO (Redis: 10 s unless a failover runs).
const INFO_PERIOD_MS: u64 = 1000;
/// How late a sentinel's timer may fire before it distrusts itself (TILT; Redis: 2 s).
const TILT_TRIGGER_MS: u64 = 10_000;
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

    /// Only the master n1: clients write to it (the replicas grant nothing until a failover promotes
    /// one, which exposure judges on its own).
    fn granting(&self, nodes: &[String]) -> (Vec<String>, usize) {
        (nodes.iter().take(1).cloned().collect(), 1)
    }

    fn start_cost_ms(&self) -> u64 {
        5000
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            signals: Ok(()),
            // The redis nodes run under libfaketime, the sentinels do not: a clock fault moves
            // the clock that expires the keys, not the failure detector's.
            clock: Ok(()),
            // Not a consensus cluster, but every node-to-node and sentinel-to-node link runs
            // through a proxy of its own, so a node can be isolated; its leader is the master.
            peers: Ok(()),
            external: Err(Cannot::Never("it needs sentinels and replicas lockpick starts")),
            failover: Err(Cannot::Never("its sentinels fail the master over by themselves (crash the master with node-crash)")),
        }
    }

    fn persistence(&self) -> Support {
        Ok(())
    }

    fn dialers(&self) -> &'static [&'static str] {
        SENTINELS
    }

    fn start<'a>(&'a self, ctx: StartCtx<'a>) -> BoxFuture<'a, Result<Started, StartError>> {
        Box::pin(start(ctx))
    }

    /// None: the sentinels keep their own view (the current master, its epoch) and fail over
    /// by themselves; every run starts its own.
    fn reset(&self) -> Option<&'static dyn crate::server::Reset> {
        None
    }

    /// The record of the master the sentinels name, followed through failovers.
    fn watch(&self) -> Option<&'static dyn crate::server::Watch> {
        Some(&super::sentinel_watch::SentinelWatch)
    }
}

async fn start(ctx: StartCtx<'_>) -> Result<Started, StartError> {
    let (supervisor, proxies, names) = (ctx.supervisor, ctx.proxies, &ctx.nodes);
    let base = RedisOptions {
        aof: ctx.persistence == Persistence::AofAlways,
        // Without this the first full sync waits 5 s for more replicas to join.
        extra_config: vec![("repl-diskless-sync-delay".into(), "0".into())],
        faketime: ctx.faketime,
        // The nodes start together with their routers; on a loaded machine 5 s is short.
        ready_timeout: SETTLE,
        ..RedisOptions::default()
    };
    let sentinels: Vec<String> = SENTINELS.iter().map(|s| s.to_string()).collect();
    let nodes = start_redis_replicas(supervisor, proxies, names, &sentinels, &base).await?;
    let direct_master = nodes.members[0].addr;
    let routed_master = nodes
        .net
        .peer_addr(&names[0], "")
        .expect("a router per node");
    let routed = |name: &String| nodes.net.peer_addr(name, "").expect("a router per node");
    let nat = names
        .iter()
        .map(routed)
        .zip(nodes.client_addrs.iter().copied())
        .collect();
    let mut endpoints = Endpoints {
        nodes: names.iter().cloned().zip(nodes.client_addrs).collect(),
        sentinels: None,
        admin: Vec::new(),
    };
    let replicas = names.len() - 1;
    let deadline = Instant::now() + SETTLE;
    wait_for(deadline, "the replicas to sync with the master", || {
        replicas_synced(direct_master, replicas)
    })
    .await?;

    let mut sentinel_addrs = Vec::new();
    for name in &sentinels {
        let info = supervisor
            .lock()
            .await
            .start(
                name,
                crate::processes::NodeKind::new(SentinelOptions {
                    ready_timeout: SETTLE,
                    ..SentinelOptions::new(routed_master)
                }),
            )
            .await?;
        sentinel_addrs.push(info.addr);
    }
    for s in &sentinel_addrs {
        // A failover takes only a replica whose INFO the sentinel read in the last 5 s, and
        // sentinels ask every 10 s: a master that fails 5-10 s after the last ask would find
        // "no good slave" and no failover for 20 s. Asking every second takes the luck out.
        // A sentinel whose timer fires 2 s late (a stall of the process, on a loaded machine)
        // enters TILT mode and does nothing for 30 s; lockpick's faults never stall sentinels,
        // so only a stall as long as the run's own timeouts counts.
        let mut cmd = redis::cmd("SENTINEL");
        cmd.arg("DEBUG")
            .arg("info-period")
            .arg(INFO_PERIOD_MS)
            .arg("tilt-trigger")
            .arg(TILT_TRIGGER_MS);
        if ask::<String>(*s, cmd).await.is_none() {
            return Err(StartError::Sentinel(format!(
                "set the INFO period and TILT trigger of sentinel {s} (SENTINEL DEBUG, Redis 7.0 or later)"
            )));
        }
    }
    for s in &sentinel_addrs {
        wait_for(
            deadline,
            "the sentinels to find the replicas and each other",
            || sentinel_ready(*s, replicas),
        )
        .await?;
    }
    endpoints.sentinels = Some(Sentinels {
        master: MASTER_NAME.to_owned(),
        addrs: sentinel_addrs,
        nat,
    });
    Ok(Started {
        endpoints,
        cluster: Some(Arc::new(nodes.net)),
    })
}

async fn wait_for<F, Fut>(deadline: Instant, what: &str, mut check: F) -> Result<(), StartError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    loop {
        if check().await {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(StartError::Sentinel(format!(
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
    known_replicas >= replicas && other_sentinels >= SENTINELS.len() - 1
}
