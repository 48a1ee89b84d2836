//! `postgres-async-replica` and `postgres-sync-replica`: a PostgreSQL primary `n1` and a
//! streaming replica `n2` copied from it with `pg_basebackup`, for the `failover` fault.
//!
//! As in `redis-sentinel`, the proxy `n1` is the clients' address (in front of the primary;
//! a failover points it at the promoted replica) and the proxy `n2` is the replication link:
//! the replica copies and then streams WAL through it, so `latency` or `partition` on `n2`
//! delays or cuts replication and nothing else.
//!
//! The two kinds differ in one thing, what a commit waits for: asynchronous replication
//! acknowledges a commit once the primary has it, so a replica promoted after the primary dies
//! can lack the last acknowledged lease grants; synchronous replication
//! (`synchronous_standby_names = '*'`, `synchronous_commit = remote_apply`) acknowledges a
//! commit only once the replica has applied it.

use crate::backends::postgres::{replicas_streaming, PgOptions};
use crate::processes::NodeKind;
use crate::server::StartError;
use crate::server::{
    BoxFuture, Cannot, Capabilities, Endpoints, NodeRule, ServerKind, StartCtx, Started, Support,
};
use crate::vocab::Persistence;
use std::time::{Duration, Instant};

/// How long the replica may take to copy the primary and stream from it.
const SETTLE: Duration = Duration::from_secs(30);

pub(super) struct PostgresReplica {
    name: &'static str,
    about: &'static str,
    /// Commits wait until the replica applied them.
    sync: bool,
}

pub(super) static ASYNC: PostgresReplica = PostgresReplica {
    name: "postgres-async-replica",
    about: "a PostgreSQL primary n1 and an asynchronous streaming replica n2 (proxy n2 is the replication link), for the failover fault",
    sync: false,
};

pub(super) static SYNC: PostgresReplica = PostgresReplica {
    name: "postgres-sync-replica",
    about: "a PostgreSQL primary n1 and a synchronous streaming replica n2 (commits wait for remote_apply), for the failover fault",
    sync: true,
};

impl ServerKind for PostgresReplica {
    fn name(&self) -> &'static str {
        self.name
    }

    fn about(&self) -> &'static str {
        self.about
    }

    fn nodes(&self) -> NodeRule {
        // A primary and the one replica a failover promotes.
        NodeRule {
            default: 2,
            min: 2,
            max: 2,
            odd: false,
        }
    }

    /// Only the primary n1: clients write to it (the replicas grant nothing until a failover promotes
    /// one, which exposure judges on its own).
    fn granting(&self, nodes: &[String]) -> (Vec<String>, usize) {
        (nodes.iter().take(1).cloned().collect(), 1)
    }

    fn start_cost_ms(&self) -> u64 {
        9500
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            signals: Ok(()),
            clock: Ok(()),
            peers: Err(Cannot::Never(
                "its replica follows the primary; they are not a consensus cluster",
            )),
            external: Err(Cannot::Never(
                "it needs a replica lockpick copies from the primary it starts",
            )),
            failover: Ok(()),
        }
    }

    /// As for `postgres`: fsync and synchronous_commit on each node; with `sync`, commits
    /// wait for the replica whatever the persistence.
    fn persistence(&self) -> Support {
        Ok(())
    }

    fn start<'a>(&'a self, ctx: StartCtx<'a>) -> BoxFuture<'a, Result<Started, StartError>> {
        Box::pin(self.start_pair(ctx))
    }

    /// None: a run may promote the replica (a failover), and a replica's standby state and
    /// replication slot are more than a reset can promise to put back; every run starts its own.
    fn reset(&self) -> Option<&'static dyn crate::server::Reset> {
        None
    }

    /// None: a watcher is given the nodes clients reach, here `n1` alone (the replica is no
    /// client address), and the failover kills `n1` and promotes `n2`: a record of `n1` would
    /// stop at the failover, exactly when the lock's record moves to the promoted replica, and
    /// could never show the grant it lacks. Following the primary needs `n2`'s own address.
    fn watch(&self) -> Option<&'static dyn crate::server::Watch> {
        None
    }
}

impl PostgresReplica {
    async fn start_pair(&self, ctx: StartCtx<'_>) -> Result<Started, StartError> {
        let (primary, replica) = (&ctx.nodes[0], &ctx.nodes[1]);
        let durable = ctx.persistence == Persistence::AofAlways;
        let base = PgOptions {
            fsync: durable,
            synchronous_commit: durable,
            faketime: ctx.faketime,
            ..PgOptions::default()
        };
        let mut primary_options = base.clone();
        if self.sync {
            // Written after lockpick's own lines, so they win over synchronous_commit = off.
            primary_options.extra_config = vec![
                ("synchronous_standby_names".into(), "*".into()),
                ("synchronous_commit".into(), "remote_apply".into()),
            ];
        }
        let info = ctx
            .supervisor
            .lock()
            .await
            .start(primary, NodeKind::from(primary_options))
            .await?;
        let mut endpoints = Endpoints::default();
        // Only n1 is a client address: the replica's proxy carries its replication link.
        let client_addr = ctx.proxies.create(primary, info.addr).await?;
        endpoints.nodes.push((primary.clone(), client_addr));
        let link = ctx.proxies.create(replica, info.addr).await?;
        let replica_options = PgOptions {
            replica_of: Some(link),
            ..base
        };
        ctx.supervisor
            .lock()
            .await
            .start(replica, NodeKind::from(replica_options))
            .await?;
        // The clients create their table on the primary next: with sync replication that
        // commit waits for the replica, so it must be streaming first.
        let deadline = Instant::now() + SETTLE;
        while replicas_streaming(info.addr, self.sync).await < 1 {
            if Instant::now() >= deadline {
                return Err(StartError::Replica(format!(
                    "{replica} was not streaming from {primary} after {} s (see nodes/{replica}/server.log)",
                    SETTLE.as_secs()
                )));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(Started {
            endpoints,
            cluster: None,
        })
    }
}
