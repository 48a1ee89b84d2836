//! Resetting `redis` nodes between runs that share them: every key (the lock keys and the
//! fencing-token counter, so tokens start again at 1 as on a fresh server), the script cache
//! and every other client's connection gone.

use crate::server::{BoxFuture, Endpoints, Reset};
use std::time::Duration;

pub(super) struct RedisReset;

impl Reset for RedisReset {
    fn reset<'a>(
        &'a self,
        endpoints: &'a Endpoints,
        limit: Duration,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            for (node, addr) in &endpoints.nodes {
                let mut con = crate::wire::redis::connect(*addr, limit)
                    .await
                    .map_err(|e| format!("{node}: {e}"))?;
                // A connection an earlier run's client left open (a killed adapter behind a
                // healed proxy) must not act in this run; ours is skipped by default.
                for cmd in [
                    redis::cmd("FLUSHALL").arg("SYNC").clone(),
                    redis::cmd("SCRIPT").arg("FLUSH").clone(),
                    redis::cmd("CLIENT")
                        .arg("KILL")
                        .arg("TYPE")
                        .arg("normal")
                        .clone(),
                ] {
                    let answer = crate::wire::redis::request(
                        limit,
                        cmd.query_async::<redis::Value>(&mut con),
                    )
                    .await;
                    if let crate::vocab::Outcome::Fail(e) | crate::vocab::Outcome::Info(e) = answer
                    {
                        return Err(format!("{node}: {e}"));
                    }
                }
            }
            Ok(())
        })
    }

    /// Independent nodes: a restarted one is empty and serving once it answers the reset.
    fn settle(&self) -> Option<&'static dyn crate::server::Settle> {
        Some(&crate::server::NothingToSettle)
    }
}
