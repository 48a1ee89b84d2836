//! `redis`: N independent redis-server nodes (`n1` …), each behind its proxy; a single-instance
//! lock uses `n1`, Redlock uses them all as its masters.

use crate::backends::redis::RedisOptions;
use crate::server::StartError;
use crate::server::{
    BoxFuture, Cannot, Capabilities, NodeRule, Reset, ServerKind, StartCtx, Started, Support,
};
use crate::vocab::Persistence;

pub(super) struct Redis;

impl ServerKind for Redis {
    fn name(&self) -> &'static str {
        "redis"
    }

    fn about(&self) -> &'static str {
        "independent redis-server nodes (no replication), under libfaketime when clocks move"
    }

    fn nodes(&self) -> NodeRule {
        NodeRule {
            default: 1,
            min: 1,
            max: 15,
            odd: false,
        }
    }

    fn start_cost_ms(&self) -> u64 {
        1000
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            signals: Ok(()),
            clock: Ok(()),
            peers: Err(Cannot::Never(
                "its nodes are independent servers, not members of a cluster",
            )),
            external: Ok(()),
            failover: Err(Cannot::Never(
                "it is a single server without a replica (redis-sentinel fails over by itself)",
            )),
        }
    }

    fn persistence(&self) -> Support {
        Ok(())
    }

    fn start<'a>(&'a self, ctx: StartCtx<'a>) -> BoxFuture<'a, Result<Started, StartError>> {
        Box::pin(async move {
            let options = RedisOptions {
                aof: ctx.persistence == Persistence::AofAlways,
                faketime: ctx.faketime,
                ..RedisOptions::default()
            };
            crate::server::start_all(ctx, crate::processes::NodeKind::new(options)).await
        })
    }

    /// `FLUSHALL`, `SCRIPT FLUSH` and the other clients' connections closed: nothing of a
    /// lock is kept anywhere else.
    fn reset(&self) -> Option<&'static dyn Reset> {
        Some(&super::reset::RedisReset)
    }

    /// Keyspace notifications on every node (each a master of its own).
    fn watch(&self) -> Option<&'static dyn crate::server::Watch> {
        Some(&super::watch::RedisWatch)
    }
}
