//! Starting the `redis-sentinel` backend: a master `n1`, replicas `n2`… whose replication link
//! runs through the proxy named after the replica (so the nemesis can delay or cut it), and
//! three sentinels `s1`…`s3` watching the master. Clients find the master through the
//! sentinels and talk to it directly; the proxy named `n1` carries no traffic.

use super::error::RunError;
use crate::client::{connect_redis, redis_request, Outcome, SentinelLock};
use crate::db::{RedisOptions, SentinelOptions, Supervisor};
use crate::proxy::FaultProxies;
use crate::scenario::{Persistence, Scenario};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// How many sentinels watch the master; two must agree it is down.
const SENTINELS: usize = 3;
/// Time for the replicas to sync and the sentinels to find the replicas and each other
/// (sentinels announce themselves every 2 s).
const SETTLE: Duration = Duration::from_secs(20);
const MASTER_NAME: &str = "lockpick";

pub(super) async fn start_sentinel_backend(
    scenario: &Scenario,
    supervisor: &Mutex<Supervisor>,
    proxies: &FaultProxies,
) -> Result<SentinelLock, RunError> {
    let names = scenario.node_names();
    let base = RedisOptions {
        aof: scenario.persistence == Persistence::AofAlways,
        // Without this the first full sync waits 5 s for more replicas to join.
        extra_config: vec![("repl-diskless-sync-delay".into(), "0".into())],
        ..RedisOptions::default()
    };
    let master = supervisor
        .lock()
        .await
        .start_redis(&names[0], base.clone())
        .await?;
    proxies.create(&names[0], master.addr).await?;
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

    let mut sentinels = Vec::new();
    for i in 1..=SENTINELS {
        let info = supervisor
            .lock()
            .await
            .start(
                &format!("s{i}"),
                crate::db::NodeKind::Sentinel(SentinelOptions::new(master.addr)),
            )
            .await?;
        sentinels.push(info.addr);
    }
    for s in &sentinels {
        wait_for(
            deadline,
            "the sentinels to find the replicas and each other",
            || sentinel_ready(*s, replicas),
        )
        .await?;
    }
    let spec = &scenario.lock;
    Ok(SentinelLock::new(
        sentinels,
        MASTER_NAME,
        &spec.name,
        spec.ttl_ms,
        spec.op_timeout_ms,
        spec.retry_delay_ms,
        spec.wait,
    ))
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
