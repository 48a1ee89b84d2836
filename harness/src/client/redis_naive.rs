//! The naive Redis lock from the seeds' first version: `SETNX` then `DEL`, no TTL, no owner
//! check, no fencing token. A holder that dies never gives the lock back.

use super::lock::{Grant, LockClient, LockSession, Outcome};
use super::redis_error::{connect, request};
use super::retry::try_until;
use crate::scenario::MsRange;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug)]
struct Config {
    addr: SocketAddr,
    key: String,
    op_timeout: Duration,
    retry_delay: MsRange,
}

/// Makes sessions of the naive lock.
pub struct RedisNaiveLock {
    config: Arc<Config>,
}

impl RedisNaiveLock {
    pub fn new(
        addr: SocketAddr,
        lock: &str,
        op_timeout_ms: u64,
        retry_delay: MsRange,
    ) -> RedisNaiveLock {
        RedisNaiveLock {
            config: Arc::new(Config {
                addr,
                key: format!("lockpick:lock:{lock}"),
                op_timeout: Duration::from_millis(op_timeout_ms),
                retry_delay,
            }),
        }
    }
}

/// One process's connection to the lock node.
#[derive(Clone)]
pub struct RedisNaiveSession {
    config: Arc<Config>,
    con: redis::aio::MultiplexedConnection,
    rng: ChaCha8Rng,
}

impl LockClient for RedisNaiveLock {
    type Session = RedisNaiveSession;

    async fn connect(&self, seed: u64) -> Result<RedisNaiveSession, String> {
        let con = connect(self.config.addr, self.config.op_timeout).await?;
        Ok(RedisNaiveSession {
            config: self.config.clone(),
            con,
            rng: ChaCha8Rng::seed_from_u64(seed),
        })
    }

    fn lease_ms(&self) -> Option<u64> {
        None
    }
}

impl LockSession for RedisNaiveSession {
    async fn acquire(&mut self, holder: &str, deadline: Instant) -> Outcome<Grant> {
        let config = self.config.clone();
        let con = self.con.clone();
        try_until(deadline, config.retry_delay, &mut self.rng, || {
            let (config, mut con) = (config.clone(), con.clone());
            async move {
                let sent_at = Instant::now();
                let mut set = redis::cmd("SETNX");
                set.arg(&config.key).arg(holder);
                request(config.op_timeout, set.query_async::<i64>(&mut con))
                    .await
                    .map(|set| {
                        (set == 1).then(|| Grant {
                            token: None,
                            holder: holder.to_owned(),
                            lease_ms: None,
                            sent_at,
                        })
                    })
            }
        })
        .await
    }

    async fn release(&mut self, _grant: &Grant) -> Outcome<()> {
        // No owner check: this deletes whoever's lock is there. That is the point of this lock.
        let mut del = redis::cmd("DEL");
        del.arg(&self.config.key);
        request(
            self.config.op_timeout,
            del.query_async::<i64>(&mut self.con),
        )
        .await
        .map(|_| ())
    }

    async fn renew(&mut self, _grant: &Grant) -> Outcome<()> {
        // Nothing expires, so there is nothing to renew.
        Outcome::Ok(())
    }
}
