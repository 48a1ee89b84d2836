//! The Redis lock on a master found through Sentinel: each new session asks the sentinels
//! where the master is, then runs the single-instance lock there. Optionally waits after each
//! grant until replicas acknowledged it (`WAIT`), and in the Redisson variant gives the lock
//! back when they did not. Replication is asynchronous: a grant the replica never saw is lost
//! when Sentinel promotes that replica.
//!
//! A session stays with its master until it fails, unless it follows the master
//! (`follow_master`): then it asks the sentinels before every acquire and moves to the master
//! they name, as Sentinel-aware clients do that watch `+switch-master` (Jedis, Redisson). That
//! is what puts a client on the promoted replica while the old master, cut off from the
//! sentinels but not from the clients, still serves the holder that took the lock there.

use crate::backends::redis::lock::{RedisLock, RedisSession};
use crate::client::kind::{BuildCtx, ClientKind, ClientOptions, Clients, Runs};
use crate::client::lock::{Grant, LockClient, LockSession, Outcome};
use crate::vocab::{ClientTable, MsRange, ScenarioError};
use crate::wire::redis::{connect, request};
use lockpick_checker::history::Value;
use serde::Deserialize;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use toml::Spanned;

/// Makes sessions of the Redis lock on whatever master the sentinels name.
#[derive(Clone)]
pub struct SentinelLock {
    sentinels: Vec<SocketAddr>,
    master_name: String,
    /// The run's lock names.
    locks: Arc<[String]>,
    ttl_ms: u64,
    op_timeout_ms: u64,
    retry_delay: MsRange,
    wait: Option<WaitSpec>,
    /// Ask the sentinels before every acquire and move to the master they name.
    follow_master: bool,
}

impl SentinelLock {
    /// Precondition: `sentinels` is not empty.
    pub fn new(
        sentinels: Vec<SocketAddr>,
        master_name: &str,
        locks: &[String],
        ttl_ms: u64,
        op_timeout_ms: u64,
        retry_delay: MsRange,
        wait: Option<WaitSpec>,
    ) -> SentinelLock {
        assert!(!sentinels.is_empty(), "at least one sentinel");
        SentinelLock {
            sentinels,
            master_name: master_name.to_owned(),
            locks: locks.into(),
            ttl_ms,
            op_timeout_ms,
            retry_delay,
            wait,
            follow_master: false,
        }
    }

    /// Sessions ask the sentinels before every acquire and move to the master they name.
    pub fn following_the_master(mut self) -> SentinelLock {
        self.follow_master = true;
        self
    }

    /// A session of the lock recipe on `master`.
    async fn open_on(&self, master: SocketAddr, seed: u64) -> Result<RedisSession, String> {
        let lock = RedisLock::new(
            master,
            &self.locks,
            self.ttl_ms,
            self.op_timeout_ms,
            self.retry_delay,
        );
        lock.connect(seed).await
    }

    /// Asks the sentinels in turn for the master's address; the first answer wins.
    pub async fn master(&self) -> Result<SocketAddr, String> {
        let limit = Duration::from_millis(self.op_timeout_ms);
        let mut last = String::from("no sentinel answered");
        for addr in &self.sentinels {
            let mut con = match connect(*addr, limit).await {
                Ok(c) => c,
                Err(e) => {
                    last = e;
                    continue;
                }
            };
            let mut cmd = redis::cmd("SENTINEL");
            cmd.arg("get-master-addr-by-name").arg(&self.master_name);
            match request::<Option<(String, u16)>>(limit, cmd.query_async(&mut con)).await {
                Outcome::Ok(Some((host, port))) => {
                    return format!("{host}:{port}")
                        .parse()
                        .map_err(|e| format!("sentinel {addr} named master {host}:{port}: {e}"));
                }
                Outcome::Ok(None) => last = format!("sentinel {addr} knows no master"),
                Outcome::Fail(e) | Outcome::Info(e) => last = format!("ask sentinel {addr}: {e}"),
            }
        }
        Err(last)
    }
}

/// A session on the master the sentinels named when it was opened (or, following the
/// master, before the last acquire).
#[derive(Clone)]
pub struct SentinelSession {
    inner: RedisSession,
    master: SocketAddr,
    wait: Option<WaitSpec>,
    op_timeout: Duration,
    last: Value,
    /// The lock, to move to a new master with, when the session follows the master.
    follow: Option<Arc<SentinelLock>>,
    seed: u64,
    /// The lock selected last, selected again on a new master.
    lock_index: usize,
}

impl SentinelSession {
    /// Moves to the master the sentinels name now, if it changed. Stays where it is when no
    /// sentinel answers or the new master cannot be reached: the next acquire asks again.
    async fn follow_master(&mut self) {
        let Some(lock) = self.follow.clone() else {
            return;
        };
        let Ok(master) = lock.master().await else {
            return;
        };
        if master == self.master {
            return;
        }
        if let Ok(mut inner) = lock.open_on(master, self.seed).await {
            inner.select_lock(self.lock_index);
            self.inner = inner;
            self.master = master;
        }
    }
}

impl LockClient for SentinelLock {
    type Session = SentinelSession;

    async fn connect(&self, seed: u64) -> Result<SentinelSession, String> {
        let master = self.master().await?;
        Ok(SentinelSession {
            inner: self.open_on(master, seed).await?,
            master,
            wait: self.wait,
            op_timeout: Duration::from_millis(self.op_timeout_ms),
            last: Value::default(),
            follow: self.follow_master.then(|| Arc::new(self.clone())),
            seed,
            lock_index: 0,
        })
    }

    fn lease_ms(&self) -> Option<u64> {
        Some(self.ttl_ms)
    }
}

impl LockSession for SentinelSession {
    async fn acquire(&mut self, holder: &str, deadline: Instant) -> Outcome<Grant> {
        self.follow_master().await;
        let granted = self.inner.acquire(holder, deadline).await;
        self.last = Value {
            note: Some(format!("master {}", self.master)),
            ..Value::default()
        };
        let (Outcome::Ok(grant), Some(wait)) = (&granted, self.wait) else {
            return granted;
        };
        let mut con = self.inner.connection();
        let mut cmd = redis::cmd("WAIT");
        cmd.arg(wait.replicas).arg(wait.timeout_ms);
        let limit = self.op_timeout + Duration::from_millis(wait.timeout_ms);
        let acked = match request::<u64>(limit, cmd.query_async(&mut con)).await {
            Outcome::Ok(n) => n,
            // The lock is ours either way; unknown replication counts as not acknowledged.
            Outcome::Fail(_) | Outcome::Info(_) => 0,
        };
        self.last.replicas_acked = Some(acked);
        if acked >= wait.replicas || !wait.release_unacked {
            return granted;
        }
        let grant = grant.clone();
        match self.inner.release(&grant).await {
            Outcome::Info(e) => Outcome::Info(format!("not replicated; release unknown: {e}")),
            _ => Outcome::Fail("not-replicated".to_owned()),
        }
    }

    fn select_lock(&mut self, index: usize) {
        self.lock_index = index;
        self.inner.select_lock(index);
    }

    async fn release(&mut self, grant: &Grant) -> Outcome<()> {
        self.inner.release(grant).await
    }

    async fn renew(&mut self, grant: &Grant) -> Outcome<()> {
        self.inner.renew(grant).await
    }

    fn last_detail(&mut self) -> Value {
        std::mem::take(&mut self.last)
    }
}

/// `WAIT replicas timeout_ms` after a grant (`[client] wait_replicas`, `wait_timeout_ms`,
/// `wait_release`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitSpec {
    pub replicas: u64,
    pub timeout_ms: u64,
    /// Give the lock back (and fail the acquire) when fewer replicas acknowledged, as
    /// Redisson does.
    pub release_unacked: bool,
}

/// `[client] kind = "sentinel-lock"`, on the master a `redis-sentinel` server's sentinels name.
pub(super) static KIND: SentinelKind = SentinelKind;

pub(super) struct SentinelKind;

/// The `[client]` table of `sentinel-lock`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOptions {
    #[serde(default, rename = "kind")]
    _kind: serde::de::IgnoredAny,
    /// Read by the scenario loader.
    #[serde(default, rename = "discipline")]
    _discipline: serde::de::IgnoredAny,
    wait_replicas: Option<Spanned<u64>>,
    wait_timeout_ms: Option<Spanned<u64>>,
    #[serde(default)]
    wait_release: bool,
    #[serde(default)]
    follow_master: bool,
}

/// `sentinel-lock`'s options, read.
#[derive(Debug)]
struct SentinelOptions {
    wait: Option<WaitSpec>,
    follow_master: bool,
}

impl ClientKind for SentinelKind {
    fn name(&self) -> &'static str {
        "sentinel-lock"
    }

    fn many_locks(&self) -> Result<(), &'static str> {
        Ok(())
    }

    fn about(&self) -> &'static str {
        "the redis-lock recipe on the master the sentinels name, optionally WAIT for replicas after a grant, or following the master they name before every acquire"
    }

    fn runs_on(&self) -> Runs {
        Runs::On(&["redis-sentinel"])
    }

    fn options(&self, table: &ClientTable<'_>) -> Result<Arc<dyn ClientOptions>, ScenarioError> {
        let raw: RawOptions = table.read()?;
        let wait = match &raw.wait_replicas {
            Some(r) => Some(WaitSpec {
                replicas: table.in_range("client.wait_replicas", r, 1, 4)?,
                timeout_ms: raw
                    .wait_timeout_ms
                    .as_ref()
                    .map(|v| table.in_range("client.wait_timeout_ms", v, 1, 600_000))
                    .transpose()?
                    .unwrap_or(100),
                release_unacked: raw.wait_release,
            }),
            None => {
                if let Some(t) = &raw.wait_timeout_ms {
                    return Err(table.error(
                        t.span(),
                        "client.wait_timeout_ms",
                        "only with wait_replicas (how many replicas to wait for)",
                    ));
                }
                None
            }
        };
        Ok(Arc::new(SentinelOptions {
            wait,
            follow_master: raw.follow_master,
        }))
    }
}

impl ClientOptions for SentinelOptions {
    fn build(&self, ctx: &BuildCtx<'_>) -> Result<Box<dyn Clients>, String> {
        let lock = ctx.lock;
        let Some(sentinels) = &ctx.endpoints.sentinels else {
            return Err("sentinel-lock needs sentinels, and this server runs none".to_owned());
        };
        let mut client = SentinelLock::new(
            sentinels.addrs.clone(),
            &sentinels.master,
            &lock.names(),
            lock.ttl_ms,
            lock.op_timeout_ms,
            lock.retry_delay_ms,
            self.wait,
        );
        if self.follow_master {
            client = client.following_the_master();
        }
        Ok(Box::new(Arc::new(client)))
    }
}
