//! `mariadb`: one MariaDB server (Debian's MySQL) behind its proxy, started on an empty data
//! folder, under libfaketime when clocks move so `NOW()` moves.

use crate::backends::mariadb::MariaDbOptions;
use crate::processes::NodeKind;
use crate::server::StartError;
use crate::server::{
    BoxFuture, Cannot, Capabilities, NodeRule, ServerKind, StartCtx, Started, Support,
};
use crate::vocab::Persistence;

pub(super) struct MariaDb;

impl ServerKind for MariaDb {
    fn name(&self) -> &'static str {
        "mariadb"
    }

    fn about(&self) -> &'static str {
        "one MariaDB server (Debian mariadb-server); persistence aof-always = innodb_flush_log_at_trx_commit 1"
    }

    fn nodes(&self) -> NodeRule {
        crate::server::SINGLE_SERVER
    }

    fn start_cost_ms(&self) -> u64 {
        1500
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            signals: Ok(()),
            clock: Ok(()),
            peers: Err(Cannot::Never(
                "it is a single server, not members of a cluster",
            )),
            external: Ok(()),
            failover: Err(Cannot::Never("it is a single server without a replica")),
        }
    }

    /// `none`: innodb_flush_log_at_trx_commit 0, so a crash loses up to a second of
    /// acknowledged commits; `aof-always`: 1, every acknowledged commit survives.
    fn persistence(&self) -> Support {
        Ok(())
    }

    fn start<'a>(&'a self, ctx: StartCtx<'a>) -> BoxFuture<'a, Result<Started, StartError>> {
        Box::pin(async move {
            let kind = NodeKind::from(MariaDbOptions {
                durable: ctx.persistence == Persistence::AofAlways,
                faketime: ctx.faketime,
                ..MariaDbOptions::default()
            });
            crate::server::start_all(ctx, kind).await
        })
    }

    /// Every other connection killed and lockpick's database dropped (see `reset.rs`).
    fn reset(&self) -> Option<&'static dyn crate::server::Reset> {
        Some(&super::reset::MariaDbReset)
    }

    /// Polling the lease rows and named locks (see `watch.rs`).
    fn watch(&self) -> Option<&'static dyn crate::server::Watch> {
        Some(&super::watch::MariaDbWatch)
    }
}
