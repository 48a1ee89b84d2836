//! Redlock over N independent Redis masters, as published: `SET key value NX PX ttl` with the
//! same random value on each master in turn, each with a time limit far below the TTL; held
//! when a majority said OK and time is left (validity = TTL − elapsed − drift); otherwise
//! released on every master, since a master may have set the key though its reply was lost.
//! Redlock has no fencing token: grants carry `token: None`.

use crate::backends::redis::redlock_validity::{lease_from_start, quorum, validity};
use crate::backends::redis::scripts::{EXTEND, RELEASE};
use crate::client::kind::{ClientKind, ClientOptions, Plain, Runs};
use crate::client::lock::{Grant, LockClient, LockSession, Outcome};
use crate::client::retry::try_until;
use crate::server::NodeRule;
use crate::vocab::MsRange;
use crate::vocab::{ClientTable, ScenarioError};
use crate::wire::redis::{connect, request};
use lockpick_checker::history::Value;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// One master's answer to one request, as recorded in `value.per_node`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeAnswer {
    /// The command took effect (`SET` said OK, the script deleted or extended our key).
    Ok,
    /// `SET NX` found the key held (by someone else), or the script found it not ours.
    Taken,
    /// Definitely not done: connection refused, connect failed, error reply.
    Failed(String),
    /// Unknown: time limit passed or the connection broke after sending.
    Unknown(String),
}

impl NodeAnswer {
    /// A few words for the history: `ok`, `taken`, `fail: …`, `info: …`.
    pub fn label(&self) -> String {
        match self {
            NodeAnswer::Ok => "ok".to_owned(),
            NodeAnswer::Taken => "taken".to_owned(),
            NodeAnswer::Failed(e) => format!("fail: {e}"),
            NodeAnswer::Unknown(e) => format!("info: {e}"),
        }
    }
}

#[derive(Debug)]
struct Config {
    /// Node names (for the history) and addresses, tried in this order.
    nodes: Vec<(String, SocketAddr)>,
    /// `lockpick:lock:<name>` of each of the run's locks.
    keys: Vec<String>,
    ttl: Duration,
    node_timeout: Duration,
    retry_delay: MsRange,
}

/// Makes Redlock sessions over a fixed list of masters.
pub struct Redlock {
    config: Arc<Config>,
}

impl Redlock {
    /// A Redlock over `nodes` (name, address), in the order they are tried, for the locks
    /// named `locks` (sessions act on the first until told otherwise). `node_timeout_ms`
    /// bounds each request to one master (connect included) and should be far below `ttl_ms`.
    /// Precondition: `nodes` and `locks` are not empty.
    pub fn new(
        nodes: Vec<(String, SocketAddr)>,
        locks: &[String],
        ttl_ms: u64,
        node_timeout_ms: u64,
        retry_delay: MsRange,
    ) -> Redlock {
        assert!(!nodes.is_empty(), "redlock needs at least one master");
        assert!(!locks.is_empty(), "redlock needs a lock name");
        Redlock {
            config: Arc::new(Config {
                nodes,
                keys: locks.iter().map(|l| format!("lockpick:lock:{l}")).collect(),
                ttl: Duration::from_millis(ttl_ms),
                node_timeout: Duration::from_millis(node_timeout_ms),
                retry_delay,
            }),
        }
    }
}

/// One process's connections to the masters, opened on first use and reopened after any
/// failure, so a crashed or paused master does not hold up the others.
#[derive(Clone)]
pub struct RedlockSession {
    config: Arc<Config>,
    conns: Arc<Vec<Mutex<Option<redis::aio::MultiplexedConnection>>>>,
    rng: ChaCha8Rng,
    /// Per-node answers and validity of the last try of the last acquire, for the history.
    last: Value,
    /// The lock the session acts on, an index into the keys.
    lock: usize,
}

impl LockClient for Redlock {
    type Session = RedlockSession;

    async fn connect(&self, seed: u64) -> Result<RedlockSession, String> {
        Ok(RedlockSession {
            config: self.config.clone(),
            conns: Arc::new(self.config.nodes.iter().map(|_| Mutex::default()).collect()),
            rng: ChaCha8Rng::seed_from_u64(seed),
            last: Value::default(),
            lock: 0,
        })
    }

    fn lease_ms(&self) -> Option<u64> {
        Some(self.config.ttl.as_millis() as u64)
    }
}

/// What one round over all masters got.
struct Round {
    answers: Vec<NodeAnswer>,
    elapsed: Duration,
}

impl Round {
    fn oks(&self) -> usize {
        self.answers
            .iter()
            .filter(|a| **a == NodeAnswer::Ok)
            .count()
    }

    fn per_node(&self, config: &Config) -> BTreeMap<String, String> {
        config
            .nodes
            .iter()
            .zip(&self.answers)
            .map(|((name, _), a)| (name.clone(), a.label()))
            .collect()
    }
}

impl RedlockSession {
    /// Sends one request to master `i` within the node time limit, connecting first if needed.
    /// Any failure drops the connection so the next request starts afresh.
    async fn on_node<T: redis::FromRedisValue>(
        &self,
        i: usize,
        make: impl FnOnce() -> redis::Cmd,
    ) -> Outcome<T> {
        let limit = self.config.node_timeout;
        let mut slot = self.conns[i].lock().await;
        let started = Instant::now();
        if slot.is_none() {
            match connect(self.config.nodes[i].1, limit).await {
                Ok(c) => *slot = Some(c),
                // Nothing was sent: definitely not done.
                Err(e) => return Outcome::Fail(e),
            }
        }
        let con = slot.as_mut().expect("connected above");
        let left = limit
            .saturating_sub(started.elapsed())
            .max(Duration::from_millis(1));
        let cmd = make();
        let outcome = request(left, cmd.query_async::<T>(con)).await;
        if !matches!(outcome, Outcome::Ok(_)) {
            *slot = None;
        }
        outcome
    }

    /// `SET key holder NX PX ttl` on every master in turn.
    async fn set_all(&self, holder: &str) -> Round {
        let start = Instant::now();
        let mut answers = Vec::with_capacity(self.config.nodes.len());
        for i in 0..self.config.nodes.len() {
            let answer = self
                .on_node::<Option<String>>(i, || {
                    let mut c = redis::cmd("SET");
                    c.arg(&self.config.keys[self.lock])
                        .arg(holder)
                        .arg("NX")
                        .arg("PX")
                        .arg(self.config.ttl.as_millis() as u64);
                    c
                })
                .await;
            answers.push(match answer {
                Outcome::Ok(Some(_)) => NodeAnswer::Ok,
                Outcome::Ok(None) => NodeAnswer::Taken,
                Outcome::Fail(e) => NodeAnswer::Failed(e),
                Outcome::Info(e) => NodeAnswer::Unknown(e),
            });
        }
        Round {
            answers,
            elapsed: start.elapsed(),
        }
    }

    /// Runs a compare-on-value script (release or extend) on every master in turn.
    async fn script_all(&self, script: &'static str, holder: &str, ttl_arg: bool) -> Round {
        let start = Instant::now();
        let mut answers = Vec::with_capacity(self.config.nodes.len());
        for i in 0..self.config.nodes.len() {
            let answer = self
                .on_node::<i64>(i, || {
                    // EVAL rather than EVALSHA: a restarted master has no script cache.
                    let mut c = redis::cmd("EVAL");
                    c.arg(script)
                        .arg(1)
                        .arg(&self.config.keys[self.lock])
                        .arg(holder);
                    if ttl_arg {
                        c.arg(self.config.ttl.as_millis() as u64);
                    }
                    c
                })
                .await;
            answers.push(match answer {
                Outcome::Ok(1) => NodeAnswer::Ok,
                Outcome::Ok(_) => NodeAnswer::Taken,
                Outcome::Fail(e) => NodeAnswer::Failed(e),
                Outcome::Info(e) => NodeAnswer::Unknown(e),
            });
        }
        Round {
            answers,
            elapsed: start.elapsed(),
        }
    }

    /// Releases `holder` on every master: the acquire's cleanup after a failed majority, and
    /// the normal release. `Ok` if any master deleted it; `Info` if none did and some answer is
    /// unknown; `Fail("not-owner")` when every master definitely did not hold it.
    pub async fn release_all(&self, holder: &str) -> Outcome<()> {
        let round = self.script_all(RELEASE, holder, false).await;
        if round.oks() > 0 {
            Outcome::Ok(())
        } else if let Some(NodeAnswer::Unknown(e)) = round
            .answers
            .iter()
            .find(|a| matches!(a, NodeAnswer::Unknown(_)))
        {
            Outcome::Info(format!("release unknown: {e}"))
        } else {
            Outcome::Fail("not-owner".to_owned())
        }
    }
}

impl LockSession for RedlockSession {
    async fn acquire(&mut self, holder: &str, deadline: Instant) -> Outcome<Grant> {
        let this = self.clone();
        let mut rng = self.rng.clone();
        let last = Arc::new(std::sync::Mutex::new(Value::default()));
        let outcome = try_until(deadline, self.config.retry_delay, &mut rng, || {
            let (this, last) = (this.clone(), last.clone());
            async move {
                let start = Instant::now();
                let round = this.set_all(holder).await;
                let valid = validity(this.config.ttl, round.elapsed);
                *last.lock().expect("not poisoned") = Value {
                    per_node: round.per_node(&this.config),
                    validity_ms: Some(valid.map_or(0, |v| v.as_millis() as u64)),
                    ..Value::default()
                };
                if round.oks() >= quorum(this.config.nodes.len()) && valid.is_some() {
                    return Outcome::Ok(Some(Grant {
                        token: None,
                        holder: holder.to_owned(),
                        lease_ms: Some(lease_from_start(this.config.ttl).as_millis() as u64),
                        sent_at: start,
                        request_sent: Some(start),
                        owner: None,
                    }));
                }
                // A master may have set the key though its reply was lost: release on all.
                let _ = this.release_all(holder).await;
                Outcome::Ok(None)
            }
        })
        .await;
        self.rng = rng;
        self.last = std::mem::take(&mut *last.lock().expect("not poisoned"));
        outcome
    }

    fn select_lock(&mut self, index: usize) {
        assert!(index < self.config.keys.len(), "lock {index}");
        self.lock = index;
    }

    async fn release(&mut self, grant: &Grant) -> Outcome<()> {
        self.release_all(&grant.holder).await
    }

    /// Extends the key on every master; held again only with a majority within the TTL.
    async fn renew(&mut self, grant: &Grant) -> Outcome<()> {
        let round = self.script_all(EXTEND, &grant.holder, true).await;
        if round.oks() >= quorum(self.config.nodes.len())
            && validity(self.config.ttl, round.elapsed).is_some()
        {
            Outcome::Ok(())
        } else {
            Outcome::Fail("lost".to_owned())
        }
    }

    fn last_detail(&mut self) -> Value {
        std::mem::take(&mut self.last)
    }
}

/// `[client] kind = "redlock"`, over every node of a `redis` server as its masters.
pub(super) static KIND: RedlockKind = RedlockKind;

pub(super) struct RedlockKind;

impl ClientKind for RedlockKind {
    fn name(&self) -> &'static str {
        "redlock"
    }

    fn about(&self) -> &'static str {
        "Redlock over N independent masters: majority, validity = TTL - elapsed - drift; no token"
    }

    fn runs_on(&self) -> Runs {
        Runs::On(&["redis"])
    }

    fn many_locks(&self) -> Result<(), &'static str> {
        Ok(())
    }

    fn nodes(&self) -> Option<NodeRule> {
        // Five masters unless told, as antirez's description runs it.
        Some(NodeRule {
            default: 5,
            min: 1,
            max: usize::MAX,
            odd: false,
        })
    }

    fn options(&self, table: &ClientTable<'_>) -> Result<Arc<dyn ClientOptions>, ScenarioError> {
        Plain::read(table, |lock, at| {
            Box::new(Arc::new(Redlock::new(
                at.nodes.clone(),
                &lock.names(),
                lock.ttl_ms,
                lock.op_timeout_ms,
                lock.retry_delay_ms,
            )))
        })
    }
}
