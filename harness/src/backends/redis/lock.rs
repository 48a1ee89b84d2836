//! The single-instance Redis lock: `SET key value NX PX ttl` with a random value per acquire,
//! a fencing token from `INCR` in the same script, compare-and-delete release and
//! compare-and-pexpire renewal.

use crate::backends::redis::node::{Node, NodeSession};
use crate::backends::redis::scripts::{EXTEND, RELEASE};
use crate::client::kind::{ClientKind, ClientOptions, Plain, Runs, SINGLE_NODE};
use crate::client::lock::{Grant, LockClient, LockSession, Outcome};
use crate::server::NodeRule;
use crate::vocab::MsRange;
use crate::vocab::{ClientTable, ScenarioError};
use crate::wire::redis::request;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

// Taking the token in the same script as the SET makes "holder" and "token" one atomic step:
// no other holder can be granted between them, so tokens grow with the order of holders.
const ACQUIRE: &str = r"
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return false";

/// Settings shared by every session of one run.
#[derive(Debug)]
struct Config {
    node: Node,
    /// `lockpick:token:<name>` of each lock, as [`Node::keys`].
    token_keys: Vec<String>,
    ttl_ms: u64,
    acquire: redis::Script,
    release: redis::Script,
    renew: redis::Script,
}

impl AsRef<Node> for Config {
    fn as_ref(&self) -> &Node {
        &self.node
    }
}

/// Makes sessions of the Redis lock on one node (reached through its proxy).
pub struct RedisLock {
    config: Arc<Config>,
}

impl RedisLock {
    pub fn new(
        addr: SocketAddr,
        locks: &[String],
        ttl_ms: u64,
        op_timeout_ms: u64,
        retry_delay: MsRange,
    ) -> RedisLock {
        RedisLock {
            config: Arc::new(Config {
                node: Node::new(addr, locks, op_timeout_ms, retry_delay),
                token_keys: locks
                    .iter()
                    .map(|l| format!("lockpick:token:{l}"))
                    .collect(),
                ttl_ms,
                acquire: redis::Script::new(ACQUIRE),
                release: redis::Script::new(RELEASE),
                renew: redis::Script::new(EXTEND),
            }),
        }
    }
}

/// One process's connection to the lock node.
#[derive(Clone)]
pub struct RedisSession {
    inner: NodeSession<Config>,
}

impl LockClient for RedisLock {
    type Session = RedisSession;

    async fn connect(&self, seed: u64) -> Result<RedisSession, String> {
        Ok(RedisSession {
            inner: NodeSession::open(self.config.clone(), seed).await?,
        })
    }

    fn lease_ms(&self) -> Option<u64> {
        Some(self.config.ttl_ms)
    }
}

impl RedisSession {
    /// The session's connection to the lock node, for commands beside the lock (`WAIT`).
    pub(crate) fn connection(&self) -> redis::aio::MultiplexedConnection {
        self.inner.con.clone()
    }

    /// Runs the script `pick` names (release or renew) on our key and value, with the TTL when
    /// `with_ttl`: `Ok` when it took effect, `Fail(not_ours)` when the key no longer held our
    /// value.
    async fn if_ours(
        &mut self,
        pick: fn(&Config) -> &redis::Script,
        holder: &str,
        with_ttl: bool,
        not_ours: &str,
    ) -> Outcome<()> {
        let config = self.inner.config.clone();
        let mut inv = pick(&config).prepare_invoke();
        inv.key(self.inner.key()).arg(holder);
        if with_ttl {
            inv.arg(config.ttl_ms);
        }
        request::<i64>(
            config.node.op_timeout,
            inv.invoke_async(&mut self.inner.con),
        )
        .await
        .and_then(|n| match n {
            1 => Outcome::Ok(()),
            _ => Outcome::Fail(not_ours.to_owned()),
        })
    }
}

impl LockSession for RedisSession {
    async fn acquire(&mut self, holder: &str, deadline: Instant) -> Outcome<Grant> {
        self.inner
            .poll(deadline, |config, mut con, lock| async move {
                let sent_at = Instant::now();
                let mut inv = config.acquire.prepare_invoke();
                inv.key(&config.node.keys[lock])
                    .key(&config.token_keys[lock])
                    .arg(holder)
                    .arg(config.ttl_ms);
                let token: Outcome<Option<u64>> =
                    request(config.node.op_timeout, inv.invoke_async(&mut con)).await;
                token.map(|token| {
                    token.map(|token| Grant {
                        token: Some(token),
                        holder: holder.to_owned(),
                        lease_ms: Some(config.ttl_ms),
                        sent_at,
                        request_sent: Some(sent_at),
                        owner: None,
                    })
                })
            })
            .await
    }

    fn select_lock(&mut self, index: usize) {
        self.inner.select_lock(index);
    }

    async fn release(&mut self, grant: &Grant) -> Outcome<()> {
        self.if_ours(|c| &c.release, &grant.holder, false, "not-owner")
            .await
    }

    async fn renew(&mut self, grant: &Grant) -> Outcome<()> {
        self.if_ours(|c| &c.renew, &grant.holder, true, "lost")
            .await
    }
}

/// `[client] kind = "redis-lock"`, on `n1` of a `redis` server.
pub(super) static KIND: RedisLockKind = RedisLockKind;

pub(super) struct RedisLockKind;

impl ClientKind for RedisLockKind {
    fn name(&self) -> &'static str {
        "redis-lock"
    }

    fn about(&self) -> &'static str {
        "SET NX PX with a random value, compare-and-delete release; token: INCR in the same script"
    }

    fn runs_on(&self) -> Runs {
        Runs::On(&["redis"])
    }

    fn nodes(&self) -> Option<NodeRule> {
        Some(SINGLE_NODE)
    }

    fn many_locks(&self) -> Result<(), &'static str> {
        Ok(())
    }

    fn options(&self, table: &ClientTable<'_>) -> Result<Arc<dyn ClientOptions>, ScenarioError> {
        Plain::read(table, |lock, at| {
            Box::new(Arc::new(RedisLock::new(
                at.nodes[0].1,
                &lock.names(),
                lock.ttl_ms,
                lock.op_timeout_ms,
                lock.retry_delay_ms,
            )))
        })
    }
}
