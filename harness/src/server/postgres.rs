//! `postgres`: one PostgreSQL server behind its proxy (initdb'd into the node folder, run as
//! `lockpick-db` when lockpick is root), under libfaketime when clocks move so `now()` moves.

use super::StartError;
use super::{BoxFuture, Capabilities, Endpoints, NodeRule, ServerKind, StartCtx, Started, Support};
use crate::db::{NodeKind, PgOptions};
use crate::vocab::Persistence;

pub(super) struct Postgres;

/// One server: the SQL locks live on one database.
pub(super) const SINGLE_SERVER: NodeRule = NodeRule {
    default: 1,
    min: 1,
    max: 1,
    odd: false,
};

impl ServerKind for Postgres {
    fn name(&self) -> &'static str {
        "postgres"
    }

    fn about(&self) -> &'static str {
        "one PostgreSQL server (Debian postgresql); persistence aof-always = fsync and synchronous_commit on"
    }

    fn nodes(&self) -> NodeRule {
        SINGLE_SERVER
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            signals: Ok(()),
            clock: Ok(()),
            peers: Err("it is a single server, not members of a cluster"),
            external: Ok(()),
            failover: Err("it is a single server without a replica (use server kind postgres-async-replica or postgres-sync-replica)"),
        }
    }

    /// `none`: fsync and synchronous_commit off, so a crash loses the last acknowledged
    /// commits (measured: a row committed right before a SIGKILL is gone after the restart);
    /// `aof-always`: both on, every acknowledged commit survives.
    fn persistence(&self) -> Support {
        Ok(())
    }

    fn start<'a>(&'a self, ctx: StartCtx<'a>) -> BoxFuture<'a, Result<Started, StartError>> {
        Box::pin(async move {
            let durable = ctx.persistence == Persistence::AofAlways;
            let kind = NodeKind::from(PgOptions {
                fsync: durable,
                synchronous_commit: durable,
                faketime: ctx.faketime,
                ..PgOptions::default()
            });
            start_all(ctx, kind).await
        })
    }
}

/// Starts every node of `ctx` as `kind`, each behind a proxy named after it.
pub(super) async fn start_all(ctx: StartCtx<'_>, kind: NodeKind) -> Result<Started, StartError> {
    let mut endpoints = Endpoints::default();
    for node in &ctx.nodes {
        let info = ctx
            .supervisor
            .lock()
            .await
            .start(node, kind.clone())
            .await?;
        let addr = ctx.proxies.create(node, info.addr).await?;
        endpoints.nodes.push((node.clone(), addr));
    }
    Ok(Started {
        endpoints,
        cluster: None,
    })
}
