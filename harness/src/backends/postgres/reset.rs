//! Resetting a PostgreSQL server between runs that share it: every other session ended (its
//! advisory locks and row locks go with it), and every schema but the system ones dropped,
//! `public` made again as `initdb` makes it, so the lock's table and its token sequence are
//! made again by the next run's first session and tokens start again at 1.

use crate::server::{BoxFuture, Endpoints, Reset};
use std::time::Duration;

pub(super) struct PgReset;

/// Ends every other client session, waiting for each to be gone, then drops what the
/// earlier runs' sessions made.
const RESET_SQL: &str = "
SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity
  WHERE pid <> pg_backend_pid() AND backend_type = 'client backend';
DO $$
DECLARE s text;
BEGIN
  FOR s IN SELECT nspname FROM pg_namespace
      WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema' LOOP
    EXECUTE format('DROP SCHEMA %I CASCADE', s);
  END LOOP;
END $$;
CREATE SCHEMA public AUTHORIZATION pg_database_owner;
GRANT USAGE ON SCHEMA public TO PUBLIC;
";

impl Reset for PgReset {
    fn reset<'a>(
        &'a self,
        endpoints: &'a Endpoints,
        limit: Duration,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            for (node, addr) in &endpoints.nodes {
                let client = super::node::connect(*addr, limit, &[])
                    .await
                    .map_err(|e| format!("{node}: {e}"))?;
                // Terminating waits up to 5 s per session: a generous bound of its own.
                tokio::time::timeout(limit * 8, client.batch_execute(RESET_SQL))
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
