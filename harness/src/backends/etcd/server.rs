//! `etcd`: an etcd cluster (3 members by default) whose peer links run through lockpick's
//! proxies, so members can be isolated and the leader targeted.

use crate::backends::etcd::start_etcd_cluster;
use crate::server::StartError;
use crate::server::{
    BoxFuture, Capabilities, FieldError, NodeRule, ServerKind, StartCtx, Started, Support,
};
use crate::vocab::LockSpec;

pub(super) struct Etcd;

impl ServerKind for Etcd {
    fn name(&self) -> &'static str {
        "etcd"
    }

    fn about(&self) -> &'static str {
        "an etcd (Raft) cluster, peer links through proxies"
    }

    fn nodes(&self) -> NodeRule {
        crate::server::CLUSTER_NODES
    }

    fn start_cost_ms(&self) -> u64 {
        3200
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            signals: Ok(()),
            // libfaketime works by preloading into libc's time calls; Go reads the clock
            // through vDSO/raw syscalls and is statically linked against its own runtime.
            clock: Err(
                "etcd is a Go binary, which ignores libfaketime: its clock cannot be skewed",
            ),
            peers: Ok(()),
            external: Ok(()),
            failover: Err("its members are a consensus cluster: it elects a new leader by itself"),
        }
    }

    fn persistence(&self) -> Support {
        Err("etcd always syncs its log to disk; only redis nodes take `persistence`")
    }

    fn check_lock(&self, lock: &LockSpec) -> Result<(), FieldError> {
        if lock.ttl_ms % 1000 != 0 {
            return Err(FieldError {
                field: "lock.ttl_ms",
                message: format!(
                    "{} is not whole seconds; etcd leases have a TTL in seconds: allowed: 1000, 2000, …",
                    lock.ttl_ms
                ),
            });
        }
        Ok(())
    }

    fn start<'a>(&'a self, ctx: StartCtx<'a>) -> BoxFuture<'a, Result<Started, StartError>> {
        Box::pin(async move {
            let cluster = start_etcd_cluster(ctx.supervisor, ctx.proxies, &ctx.nodes).await?;
            Ok(crate::server::started_cluster(&ctx.nodes, cluster))
        })
    }
}
