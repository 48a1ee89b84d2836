//! `zookeeper`: a ZooKeeper ensemble (3 servers by default, tick [`ZK_TICK_MS`]) whose peer
//! links run through lockpick's proxies. The lock's TTL is its session timeout, which the
//! servers allow between 2 and 20 ticks.

use crate::backends::zookeeper::start_zk_cluster;
use crate::server::StartError;
use crate::server::{
    BoxFuture, Capabilities, FieldError, NodeRule, ServerKind, StartCtx, Started, Support,
};
use crate::vocab::LockSpec;

pub(super) struct ZooKeeper;

/// The session timeouts ZooKeeper servers with lockpick's tick allow.
/// The tick of the ZooKeeper servers lockpick runs: session timeouts (the lock's TTL) may be
/// 2 to 20 ticks.
pub const ZK_TICK_MS: u64 = 250;

const MIN_SESSION_MS: u64 = 2 * ZK_TICK_MS;
const MAX_SESSION_MS: u64 = 20 * ZK_TICK_MS;

impl ServerKind for ZooKeeper {
    fn name(&self) -> &'static str {
        "zookeeper"
    }

    fn about(&self) -> &'static str {
        "a ZooKeeper (Zab) ensemble, peer links through proxies"
    }

    fn nodes(&self) -> NodeRule {
        crate::server::CLUSTER_NODES
    }

    fn start_cost_ms(&self) -> u64 {
        4600
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            signals: Ok(()),
            clock: Err("its servers do not run under libfaketime"),
            peers: Ok(()),
            external: Ok(()),
            failover: Err("its members are a consensus cluster: it elects a new leader by itself"),
        }
    }

    fn persistence(&self) -> Support {
        Err("ZooKeeper always syncs its log to disk; only redis nodes take `persistence`")
    }

    fn check_lock(&self, lock: &LockSpec) -> Result<(), FieldError> {
        if !(MIN_SESSION_MS..=MAX_SESSION_MS).contains(&lock.ttl_ms) {
            return Err(FieldError {
                field: "lock.ttl_ms",
                message: format!(
                    "{} cannot be a ZooKeeper session timeout (2 to 20 ticks of {ZK_TICK_MS} ms); allowed: {MIN_SESSION_MS} to {MAX_SESSION_MS}",
                    lock.ttl_ms
                ),
            });
        }
        Ok(())
    }

    fn start<'a>(&'a self, ctx: StartCtx<'a>) -> BoxFuture<'a, Result<Started, StartError>> {
        Box::pin(async move {
            let cluster =
                start_zk_cluster(ctx.supervisor, ctx.proxies, &ctx.nodes, ZK_TICK_MS).await?;
            Ok(crate::server::started_cluster(&ctx.nodes, cluster))
        })
    }
}
