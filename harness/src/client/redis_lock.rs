//! The single-instance Redis lock: `SET key value NX PX ttl` with a random value per acquire,
//! a fencing token from `INCR` in the same script, compare-and-delete release and
//! compare-and-pexpire renewal.

use super::lock::{Grant, LockClient, LockSession, Outcome};
use super::redis_error::{connect, request};
use super::retry::try_until;
use crate::scenario::MsRange;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

// Taking the token in the same script as the SET makes "holder" and "token" one atomic step:
// no other holder can be granted between them, so tokens grow with the order of holders.
const ACQUIRE: &str = r"
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return false";

const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0";

const RENEW: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0";

/// Settings shared by every session of one run.
#[derive(Debug)]
struct Config {
    addr: SocketAddr,
    key: String,
    token_key: String,
    ttl_ms: u64,
    op_timeout: Duration,
    retry_delay: MsRange,
    acquire: redis::Script,
    release: redis::Script,
    renew: redis::Script,
}

/// Makes sessions of the Redis lock on one node (reached through its proxy).
pub struct RedisLock {
    config: Arc<Config>,
}

impl RedisLock {
    pub fn new(
        addr: SocketAddr,
        lock: &str,
        ttl_ms: u64,
        op_timeout_ms: u64,
        retry_delay: MsRange,
    ) -> RedisLock {
        RedisLock {
            config: Arc::new(Config {
                addr,
                key: format!("lockpick:lock:{lock}"),
                token_key: format!("lockpick:token:{lock}"),
                ttl_ms,
                op_timeout: Duration::from_millis(op_timeout_ms),
                retry_delay,
                acquire: redis::Script::new(ACQUIRE),
                release: redis::Script::new(RELEASE),
                renew: redis::Script::new(RENEW),
            }),
        }
    }
}

/// One process's connection to the lock node.
#[derive(Clone)]
pub struct RedisSession {
    config: Arc<Config>,
    con: redis::aio::MultiplexedConnection,
    rng: ChaCha8Rng,
}

impl LockClient for RedisLock {
    type Session = RedisSession;

    async fn connect(&self, seed: u64) -> Result<RedisSession, String> {
        let con = connect(self.config.addr, self.config.op_timeout).await?;
        Ok(RedisSession {
            config: self.config.clone(),
            con,
            rng: ChaCha8Rng::seed_from_u64(seed),
        })
    }

    fn lease_ms(&self) -> Option<u64> {
        Some(self.config.ttl_ms)
    }
}

impl RedisSession {
    /// The session's connection to the lock node, for commands beside the lock (`WAIT`).
    pub(crate) fn connection(&self) -> redis::aio::MultiplexedConnection {
        self.con.clone()
    }
}

impl LockSession for RedisSession {
    async fn acquire(&mut self, holder: &str, deadline: Instant) -> Outcome<Grant> {
        let config = self.config.clone();
        let con = self.con.clone();
        try_until(deadline, config.retry_delay, &mut self.rng, || {
            let (config, mut con) = (config.clone(), con.clone());
            async move {
                let sent_at = Instant::now();
                let mut inv = config.acquire.prepare_invoke();
                inv.key(&config.key)
                    .key(&config.token_key)
                    .arg(holder)
                    .arg(config.ttl_ms);
                let token: Outcome<Option<u64>> =
                    request(config.op_timeout, inv.invoke_async(&mut con)).await;
                token.map(|token| {
                    token.map(|token| Grant {
                        token: Some(token),
                        holder: holder.to_owned(),
                        lease_ms: Some(config.ttl_ms),
                        sent_at,
                    })
                })
            }
        })
        .await
    }

    async fn release(&mut self, grant: &Grant) -> Outcome<()> {
        let mut inv = self.config.release.prepare_invoke();
        inv.key(&self.config.key).arg(&grant.holder);
        request::<i64>(self.config.op_timeout, inv.invoke_async(&mut self.con))
            .await
            .and_then(|n| match n {
                1 => Outcome::Ok(()),
                _ => Outcome::Fail("not-owner".to_owned()),
            })
    }

    async fn renew(&mut self, grant: &Grant) -> Outcome<()> {
        let mut inv = self.config.renew.prepare_invoke();
        inv.key(&self.config.key)
            .arg(&grant.holder)
            .arg(self.config.ttl_ms);
        request::<i64>(self.config.op_timeout, inv.invoke_async(&mut self.con))
            .await
            .and_then(|n| match n {
                1 => Outcome::Ok(()),
                _ => Outcome::Fail("lost".to_owned()),
            })
    }
}
