//! Resetting a MariaDB server between runs that share it: every other connection killed
//! (its `GET_LOCK` locks and row locks go with it) and lockpick's database dropped, so the
//! next run's first session makes its tables and token sequence again and tokens start
//! again at 1.

use crate::server::{BoxFuture, Endpoints, Reset};
use mysql_async::prelude::Queryable;
use std::time::Duration;

pub(super) struct MariaDbReset;

impl Reset for MariaDbReset {
    fn reset<'a>(
        &'a self,
        endpoints: &'a Endpoints,
        limit: Duration,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            for (node, addr) in &endpoints.nodes {
                let work = async {
                    let mut conn = super::node::connect_to(*addr, limit, false, Vec::new()).await?;
                    let others: Vec<u64> = conn
                        .query(
                            "SELECT id FROM information_schema.processlist \
                             WHERE id <> CONNECTION_ID() AND command <> 'Daemon' \
                             AND user <> 'system user'",
                        )
                        .await
                        .map_err(|e| format!("list connections: {e}"))?;
                    for id in others {
                        // One that ended meanwhile is "unknown thread": what we wanted.
                        let _ = conn.query_drop(format!("KILL {id}")).await;
                    }
                    conn.query_drop(format!("DROP DATABASE IF EXISTS {}", super::node::DATABASE))
                        .await
                        .map_err(|e| format!("drop database: {e}"))?;
                    let _ = conn.disconnect().await;
                    Ok::<(), String>(())
                };
                tokio::time::timeout(limit * 4, work)
                    .await
                    .map_err(|_| format!("{node}: reset: timeout"))?
                    .map_err(|e| format!("{node}: reset: {e}"))?;
            }
            Ok(())
        })
    }

    /// One server: a restarted one has recovered once it answers the reset.
    fn settle(&self) -> Option<&'static dyn crate::server::Settle> {
        Some(&crate::server::NothingToSettle)
    }
}
