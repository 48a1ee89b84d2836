//! What the six SQL lock kinds share as client kinds: one descriptor ([`SqlKind`]: name and a
//! line about the recipe) over the recipe's session type, whose database ([`Dialect`]:
//! PostgreSQL or MariaDB) gives the server kind and the session settings the `[client]` table
//! holds. The [`SqlNode`] is made once per run from the lock, the server's address and those
//! settings, and every session of the run shares it.

use crate::backends::sql::lock::{SqlLock, SqlRecipe};
use crate::backends::sql::node::{Dialect, SqlNode};
use crate::client::kind::{BuildCtx, ClientKind, ClientOptions, Clients, Runs};
use crate::server::NodeRule;
use crate::vocab::{ClientTable, ScenarioError};
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

/// A SQL lock kind: runs on one node of its database's server, reads the database's
/// session settings, and runs sessions of recipe `R`.
pub(crate) struct SqlKind<R: SqlRecipe> {
    pub(crate) name: &'static str,
    pub(crate) about: &'static str,
    pub(crate) recipe: PhantomData<fn() -> R>,
}

impl<R: SqlRecipe> ClientKind for SqlKind<R> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn about(&self) -> &'static str {
        self.about
    }

    fn runs_on(&self) -> Runs {
        Runs::On(<R::Dialect as Dialect>::SERVERS)
    }

    /// The server kind's rule: every SQL server kind gives its clients one address, the
    /// primary's (`n1`), and its other nodes (a replica) carry no client traffic.
    fn nodes(&self) -> Option<NodeRule> {
        None
    }

    fn options(&self, table: &ClientTable<'_>) -> Result<Arc<dyn ClientOptions>, ScenarioError> {
        let settings = table.read::<<R::Dialect as Dialect>::Settings>()?;
        Ok(Arc::new(SqlOptions::<R> {
            settings,
            recipe: PhantomData,
        }))
    }
}

/// A SQL lock kind's `[client]` options, read.
struct SqlOptions<R: SqlRecipe> {
    settings: <R::Dialect as Dialect>::Settings,
    recipe: PhantomData<fn() -> R>,
}

impl<R: SqlRecipe> fmt::Debug for SqlOptions<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqlOptions")
            .field("settings", &self.settings)
            .finish()
    }
}

impl<R: SqlRecipe> ClientOptions for SqlOptions<R> {
    fn build(&self, ctx: &BuildCtx<'_>) -> Result<Box<dyn Clients>, String> {
        let (_, addr) = ctx
            .endpoints
            .nodes
            .first()
            .ok_or("the database server has no node to connect to")?;
        let node = SqlNode::for_run(*addr, ctx.lock, &self.settings);
        let lock = SqlLock::<R>::new(Arc::new(node), ctx.lock.ttl_ms);
        Ok(Box::new(Arc::new(lock)))
    }
}
