//! The protected resource: a separate redis-server (lockpick's own, or one a user names), never
//! behind faults, that stores what lock holders write and (in fenced mode) rejects writes with
//! a stale token.

use crate::client::Outcome;
use crate::scenario::ResourceMode;
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
}

impl Resource {
    /// Forgets what earlier runs wrote (lockpick's two keys, nothing else), so that a resource
    /// that outlives runs starts each one empty: a max token left over would make every write
    /// of the next run look stale.
    pub async fn clear(&self) -> Result<(), String> {
        let mut con = self.con.clone();
        let mut cmd = redis::cmd("DEL");
        cmd.arg(MAX_TOKEN_KEY).arg(VALUE_KEY);
        match crate::client::redis_request(self.timeout, cmd.query_async::<u64>(&mut con)).await {
            Outcome::Ok(_) => Ok(()),
            Outcome::Fail(e) | Outcome::Info(e) => Err(format!("clear the resource: {e}")),
        }
    }

    /// Connects to the resource's redis-server.
    pub async fn connect(
        addr: SocketAddr,
        mode: ResourceMode,
        timeout: Duration,
    ) -> Result<Resource, String> {
        let con = crate::client::connect_redis(addr, timeout).await?;
        Ok(Resource {
            con,
            mode,
            script: Arc::new(redis::Script::new(WRITE)),
            timeout,
        })
    }

    /// Writes `int` (or only the token, for workloads without a value) under `token`.
    pub async fn write(&self, token: Option<u64>, int: Option<i64>) -> Outcome<WriteAck> {
        let mode = match self.mode {
            ResourceMode::Naive => "naive",
            ResourceMode::Fenced => "fenced",
        };
        let mut inv = self.script.prepare_invoke();
        inv.key(MAX_TOKEN_KEY)
            .key(VALUE_KEY)
            .arg(token.map(|t| t.to_string()).unwrap_or_default())
            .arg(mode)
            .arg(int.map(|i| i.to_string()).unwrap_or_default());
        let mut con = self.con.clone();
        crate::client::redis_request::<(i64, i64)>(self.timeout, inv.invoke_async(&mut con))
            .await
            .map(|(accepted, max)| WriteAck {
                accepted: accepted == 1,
                max_token: u64::try_from(max).ok(),
            })
    }

    /// Reads the stored value (0 when nothing was written yet).
    pub async fn read(&self) -> Outcome<i64> {
        let mut con = self.con.clone();
        let mut get = redis::cmd("GET");
        get.arg(VALUE_KEY);
        crate::client::redis_request(self.timeout, get.query_async::<Option<i64>>(&mut con))
            .await
            .map(|v| v.unwrap_or(0))
    }
}
