//! The `[client]` options of the SQL lock kinds: session settings of their own type `S`
//! (server timeouts a session sets for itself), read from the table, and the constructor of
//! the clients, which reach the one server of a `postgres` or `mariadb` run.

use super::kind::{BuildCtx, ClientOptions, Clients};
use crate::scenario::{ClientTable, LockSpec, ScenarioError};
use serde::de::DeserializeOwned;
use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

/// Makes the clients of one run from the lock, the server's address and the settings.
pub(super) type Build<S> = fn(&LockSpec, SocketAddr, &S) -> Box<dyn Clients>;

/// A SQL lock kind's `[client]` options, read, with the constructor of its clients.
pub(super) struct SqlOptions<S> {
    settings: S,
    build: Build<S>,
}

impl<S: DeserializeOwned + Default + fmt::Debug + Send + Sync + 'static> SqlOptions<S> {
    /// Reads the `[client]` table of a kind whose clients `build` makes.
    pub(super) fn read(
        table: &ClientTable<'_>,
        build: Build<S>,
    ) -> Result<Arc<dyn ClientOptions>, ScenarioError> {
        let settings = table.read::<S>()?;
        Ok(Arc::new(SqlOptions { settings, build }))
    }
}

impl<S: fmt::Debug> fmt::Debug for SqlOptions<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqlOptions")
            .field("settings", &self.settings)
            .finish()
    }
}

impl<S: fmt::Debug + Send + Sync> ClientOptions for SqlOptions<S> {
    fn build(&self, ctx: &BuildCtx<'_>) -> Result<Box<dyn Clients>, String> {
        let (_, addr) = ctx
            .endpoints
            .nodes
            .first()
            .ok_or("the database server has no node to connect to")?;
        Ok((self.build)(ctx.lock, *addr, &self.settings))
    }
}
