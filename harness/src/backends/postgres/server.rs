//! `postgres`: one PostgreSQL server behind its proxy (initdb'd into the node folder, run as
//! `lockpick-db` when lockpick is root), under libfaketime when clocks move so `now()` moves.

use crate::backends::postgres::PgOptions;
use crate::processes::NodeKind;
use crate::server::StartError;
use crate::server::{
    BoxFuture, Cannot, Capabilities, NodeRule, ServerKind, StartCtx, Started, Support,
};
use crate::vocab::Persistence;

pub(super) struct Postgres;

impl ServerKind for Postgres {
    fn name(&self) -> &'static str {
        "postgres"
    }

    fn about(&self) -> &'static str {
        "one PostgreSQL server (Debian postgresql); persistence aof-always = fsync and synchronous_commit on"
    }

    fn nodes(&self) -> NodeRule {
        crate::server::SINGLE_SERVER
    }

    fn start_cost_ms(&self) -> u64 {
        5700
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            signals: Ok(()),
            clock: Ok(()),
            peers: Err(Cannot::Never("it is a single server, not members of a cluster")),
            external: Ok(()),
            failover: Err(Cannot::Never("it is a single server without a replica (use server kind postgres-async-replica or postgres-sync-replica)")),
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
            crate::server::start_all(ctx, kind).await
        })
    }

    /// Every other session ended and every schema made again (see `reset.rs`).
    fn reset(&self) -> Option<&'static dyn crate::server::Reset> {
        Some(&super::reset::PgReset)
    }

    /// Polling the lease rows and advisory locks (see `watch.rs`).
    fn watch(&self) -> Option<&'static dyn crate::server::Watch> {
        Some(&super::watch::PgWatch)
    }
}
