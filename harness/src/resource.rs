//! The protected resource: a separate redis-server (lockpick's own, or one a user names), never
//! behind faults, that stores what lock holders write and (in fenced mode) rejects writes with
//! a stale token. With many locks each lock protects its own pair of keys, as Jepsen's
//! independent keys do.

use crate::vocab::Outcome;
use crate::vocab::ResourceMode;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

// The resource tracks the highest token it accepted in both modes, so every accepted write
// reports what it overtook: the checker sees a stale write even where nothing rejected it.
const WRITE: &str = r"
local max = tonumber(redis.call('GET', KEYS[1]))
local tok = tonumber(ARGV[1])
if ARGV[2] == 'fenced' and tok and max and tok < max then
  return {0, max}
end
if tok and (not max or tok > max) then
  redis.call('SET', KEYS[1], tok)
end
if ARGV[3] ~= '' then
  redis.call('SET', KEYS[2], ARGV[3])
end
return {1, max or -1}";

const MAX_TOKEN_KEY: &str = "lockpick:resource:max-token";
const VALUE_KEY: &str = "lockpick:resource:value";

/// What the resource said to a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteAck {
    /// False when the fence rejected the write.
    pub accepted: bool,
    /// The highest token accepted before this write, if any.
    pub max_token: Option<u64>,
}

/// A connection to the resource, shared by all clients.
#[derive(Clone)]
pub struct Resource {
    con: redis::aio::MultiplexedConnection,
    mode: ResourceMode,
    script: Arc<redis::Script>,
    timeout: Duration,
    /// The (max-token, value) keys of each lock's resource.
    keys: Arc<Vec<(String, String)>>,
}

/// The keys of each lock's resource: lockpick's two keys for one lock, and the same suffixed
/// with the lock's name for many.
fn resource_keys(locks: &[String]) -> Vec<(String, String)> {
    match locks {
        [_] | [] => vec![(MAX_TOKEN_KEY.to_owned(), VALUE_KEY.to_owned())],
        many => many
            .iter()
            .map(|l| (format!("{MAX_TOKEN_KEY}:{l}"), format!("{VALUE_KEY}:{l}")))
            .collect(),
    }
}

impl Resource {
    /// Forgets what earlier runs wrote (lockpick's two keys, nothing else), so that a resource
    /// that outlives runs starts each one empty: a max token left over would make every write
    /// of the next run look stale.
    pub async fn clear(&self) -> Result<(), String> {
        let mut con = self.con.clone();
        // A few hundred keys per command keeps each request small with many locks.
        for chunk in self.keys.chunks(256) {
            let mut cmd = redis::cmd("DEL");
            for (max, value) in chunk {
                cmd.arg(max).arg(value);
            }
            let deleted =
                crate::wire::redis::request(self.timeout, cmd.query_async::<u64>(&mut con)).await;
            if let Outcome::Fail(e) | Outcome::Info(e) = deleted {
                return Err(format!("clear the resource: {e}"));
            }
        }
        Ok(())
    }

    /// The same connection, with one resource per lock of `locks` (the run's lock names, in
    /// order): [`Resource::write`] and [`Resource::read`] then take a lock's index.
    pub fn with_locks(mut self, locks: &[String]) -> Resource {
        self.keys = Arc::new(resource_keys(locks));
        self
    }

    /// Connects to the resource's redis-server.
    pub async fn connect(
        addr: SocketAddr,
        mode: ResourceMode,
        timeout: Duration,
    ) -> Result<Resource, String> {
        let con = crate::wire::redis::connect(addr, timeout).await?;
        Ok(Resource {
            con,
            mode,
            script: Arc::new(redis::Script::new(WRITE)),
            timeout,
            keys: Arc::new(resource_keys(&[])),
        })
    }

    /// Writes `int` (or only the token, for workloads without a value) under `token` to the
    /// resource of lock `lock` (an index into the names given to [`Resource::with_locks`]).
    pub async fn write(
        &self,
        lock: usize,
        token: Option<u64>,
        int: Option<i64>,
    ) -> Outcome<WriteAck> {
        let (max_key, value_key) = &self.keys[lock];
        let mode = match self.mode {
            ResourceMode::Naive => "naive",
            ResourceMode::Fenced => "fenced",
        };
        let mut inv = self.script.prepare_invoke();
        inv.key(max_key)
            .key(value_key)
            .arg(token.map(|t| t.to_string()).unwrap_or_default())
            .arg(mode)
            .arg(int.map(|i| i.to_string()).unwrap_or_default());
        let mut con = self.con.clone();
        crate::wire::redis::request::<(i64, i64)>(self.timeout, inv.invoke_async(&mut con))
            .await
            .map(|(accepted, max)| WriteAck {
                accepted: accepted == 1,
                max_token: u64::try_from(max).ok(),
            })
    }

    /// Reads the value stored for lock `lock` (0 when nothing was written yet).
    pub async fn read(&self, lock: usize) -> Outcome<i64> {
        let mut con = self.con.clone();
        let mut get = redis::cmd("GET");
        get.arg(&self.keys[lock].1);
        crate::wire::redis::request(self.timeout, get.query_async::<Option<i64>>(&mut con))
            .await
            .map(|v| v.unwrap_or(0))
    }
}
