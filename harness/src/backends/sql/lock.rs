//! One lock type for every SQL recipe: a [`SqlLock`] holds the run's [`SqlNode`] and the lease
//! length, and opens sessions of its [`SqlRecipe`] (the session type of a recipe module:
//! its statements and how it acquires, releases and renews).

use crate::backends::sql::node::{Dialect, SqlNode};
use crate::client::lock::{LockClient, LockSession};
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

/// A SQL lock recipe, as its session type: the database it runs on, whether a grant is a
/// lease, and how a fresh session connects and prepares its statements.
pub trait SqlRecipe: LockSession + Sized {
    type Dialect: Dialect;
    /// Grants are leases of the lock's `ttl_ms` (lease rows); otherwise a grant lasts as long
    /// as the server keeps the session.
    const LEASED: bool;

    /// Opens one process's session on `node`; `seed` seeds its retry delays.
    fn open(
        node: Arc<SqlNode<Self::Dialect>>,
        seed: u64,
        ttl_ms: u64,
    ) -> impl Future<Output = Result<Self, String>> + Send;
}

/// The lock of recipe `R` on one run's server (reached through its proxy); the first session
/// makes the tables and the lock's row.
pub struct SqlLock<R: SqlRecipe> {
    node: Arc<SqlNode<R::Dialect>>,
    ttl_ms: u64,
    recipe: PhantomData<fn() -> R>,
}

impl<R: SqlRecipe> SqlLock<R> {
    /// The lock on `node`'s server, with leases of `ttl_ms` (ignored by a recipe without
    /// leases).
    pub fn new(node: Arc<SqlNode<R::Dialect>>, ttl_ms: u64) -> SqlLock<R> {
        SqlLock {
            node,
            ttl_ms,
            recipe: PhantomData,
        }
    }
}

impl<R: SqlRecipe> LockClient for SqlLock<R> {
    type Session = R;

    fn connect(&self, seed: u64) -> impl Future<Output = Result<R, String>> + Send {
        R::open(self.node.clone(), seed, self.ttl_ms)
    }

    fn lease_ms(&self) -> Option<u64> {
        R::LEASED.then_some(self.ttl_ms)
    }
}
