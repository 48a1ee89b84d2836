//! The naive Redis lock from the seeds' first version: `SETNX` then `DEL`, no TTL, no owner
//! check, no fencing token. A holder that dies never gives the lock back.

use crate::backends::redis::node::{Node, NodeSession};
use crate::client::kind::{ClientKind, ClientOptions, Plain, Runs, SINGLE_NODE};
use crate::client::lock::{Grant, LockClient, LockSession, Outcome};
use crate::server::NodeRule;
use crate::vocab::MsRange;
use crate::vocab::{ClientTable, ScenarioError};
use crate::wire::redis::request;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

/// Makes sessions of the naive lock.
pub struct RedisNaiveLock {
    config: Arc<Node>,
}

impl RedisNaiveLock {
    pub fn new(
        addr: SocketAddr,
        locks: &[String],
        op_timeout_ms: u64,
        retry_delay: MsRange,
    ) -> RedisNaiveLock {
        RedisNaiveLock {
            config: Arc::new(Node::new(addr, locks, op_timeout_ms, retry_delay)),
        }
    }
}

/// One process's connection to the lock node.
#[derive(Clone)]
pub struct RedisNaiveSession {
    inner: NodeSession<Node>,
}

impl LockClient for RedisNaiveLock {
    type Session = RedisNaiveSession;

    async fn connect(&self, seed: u64) -> Result<RedisNaiveSession, String> {
        Ok(RedisNaiveSession {
            inner: NodeSession::open(self.config.clone(), seed).await?,
        })
    }

    fn lease_ms(&self) -> Option<u64> {
        None
    }
}

impl LockSession for RedisNaiveSession {
    async fn acquire(&mut self, holder: &str, deadline: Instant) -> Outcome<Grant> {
        self.inner
            .poll(deadline, |node, mut con, lock| async move {
                let sent_at = Instant::now();
                let mut set = redis::cmd("SETNX");
                set.arg(&node.keys[lock]).arg(holder);
                request(node.op_timeout, set.query_async::<i64>(&mut con))
                    .await
                    .map(|set| {
                        (set == 1).then(|| Grant {
                            token: None,
                            holder: holder.to_owned(),
                            lease_ms: None,
                            sent_at,
                            request_sent: Some(sent_at),
                            owner: None,
                        })
                    })
            })
            .await
    }

    async fn release(&mut self, _grant: &Grant) -> Outcome<()> {
        // No owner check: this deletes whoever's lock is there. That is the point of this lock.
        let mut del = redis::cmd("DEL");
        del.arg(self.inner.key());
        request(
            self.inner.node().op_timeout,
            del.query_async::<i64>(&mut self.inner.con),
        )
        .await
        .map(|_| ())
    }

    fn select_lock(&mut self, index: usize) {
        self.inner.select_lock(index);
    }

    async fn renew(&mut self, _grant: &Grant) -> Outcome<()> {
        // Nothing expires, so there is nothing to renew.
        Outcome::Ok(())
    }
}

/// `[client] kind = "redis-naive"`, on `n1` of a `redis` server.
pub(super) static KIND: RedisNaiveKind = RedisNaiveKind;

pub(super) struct RedisNaiveKind;

impl ClientKind for RedisNaiveKind {
    fn name(&self) -> &'static str {
        "redis-naive"
    }

    fn about(&self) -> &'static str {
        "SETNX then DEL: no TTL, no owner check, no token"
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
            Box::new(Arc::new(RedisNaiveLock::new(
                at.nodes[0].1,
                &lock.names(),
                lock.op_timeout_ms,
                lock.retry_delay_ms,
            )))
        })
    }
}
