//! What the single-node Redis locks share: a lock key on one node reached through its proxy,
//! one multiplexed connection per session, and the polling acquire over that connection.

use crate::client::lock::Outcome;
use crate::client::retry::try_until;
use crate::vocab::MsRange;
use crate::wire::redis::connect;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The settings every single-node lock has: where the node is, the key of each of the run's
/// locks, and how patiently to ask.
#[derive(Debug)]
pub(super) struct Node {
    pub(super) addr: SocketAddr,
    /// `lockpick:lock:<name>` of each lock, in [`LockSpec::names`](crate::vocab::LockSpec::names) order.
    pub(super) keys: Vec<String>,
    pub(super) op_timeout: Duration,
    pub(super) retry_delay: MsRange,
}

impl Node {
    pub(super) fn new(
        addr: SocketAddr,
        locks: &[String],
        op_timeout_ms: u64,
        retry_delay: MsRange,
    ) -> Node {
        Node {
            addr,
            keys: locks.iter().map(|l| format!("lockpick:lock:{l}")).collect(),
            op_timeout: Duration::from_millis(op_timeout_ms),
            retry_delay,
        }
    }
}

impl AsRef<Node> for Node {
    fn as_ref(&self) -> &Node {
        self
    }
}

/// One process's connection to the lock node, with the lock's settings `C` (which hold a
/// [`Node`]).
pub(super) struct NodeSession<C> {
    pub(super) config: Arc<C>,
    pub(super) con: redis::aio::MultiplexedConnection,
    rng: ChaCha8Rng,
    /// The lock the session's operations act on, an index into [`Node::keys`].
    pub(super) lock: usize,
}

// Derived Clone would ask `C: Clone`; only the `Arc` is cloned.
impl<C> Clone for NodeSession<C> {
    fn clone(&self) -> Self {
        NodeSession {
            config: self.config.clone(),
            con: self.con.clone(),
            rng: self.rng.clone(),
            lock: self.lock,
        }
    }
}

impl<C: AsRef<Node>> NodeSession<C> {
    /// Connects to the node; `seed` seeds the session's retry delays.
    pub(super) async fn open(config: Arc<C>, seed: u64) -> Result<NodeSession<C>, String> {
        let node: &Node = (*config).as_ref();
        let con = connect(node.addr, node.op_timeout).await?;
        Ok(NodeSession {
            config,
            con,
            rng: ChaCha8Rng::seed_from_u64(seed),
            lock: 0,
        })
    }

    /// The key of the lock the session acts on.
    pub(super) fn key(&self) -> &str {
        &self.node().keys[self.lock]
    }

    /// Makes the following operations act on lock `index`.
    pub(super) fn select_lock(&mut self, index: usize) {
        assert!(
            index < self.node().keys.len(),
            "lock {index} of {}",
            self.node().keys.len()
        );
        self.lock = index;
    }

    /// The node settings.
    pub(super) fn node(&self) -> &Node {
        (*self.config).as_ref()
    }

    /// Runs `attempt` (given the settings, the connection and the selected lock's index)
    /// until it takes the lock, with the node's retry delays: see [`try_until`].
    pub(super) async fn poll<T, Fut>(
        &mut self,
        deadline: Instant,
        mut attempt: impl FnMut(Arc<C>, redis::aio::MultiplexedConnection, usize) -> Fut,
    ) -> Outcome<T>
    where
        Fut: Future<Output = Outcome<Option<T>>>,
    {
        let (config, con, lock) = (self.config.clone(), self.con.clone(), self.lock);
        let delay = self.node().retry_delay;
        try_until(deadline, delay, &mut self.rng, || {
            attempt(config.clone(), con.clone(), lock)
        })
        .await
    }
}
