//! The ZooKeeper lock recipe: an ephemeral sequential node `<guid>-lock-<seq>` under
//! `/locks/<name>`, the lowest sequence number holds, each waiter watches only the node just
//! before its own (no herd), and a create whose answer was lost is resolved by looking for the
//! client's own guid among the children. The guid is the acquire's holder value, and the
//! node's data too: the server's record (`watch.rs`) writes a znode's data as its value, so
//! each holding's record is attributed to its holder exactly. The session (with the scenario's
//! TTL as session timeout) is the lease: when it expires, ZooKeeper deletes the node. The
//! fencing token is the sequence number. Renewal (the driver's watchdog) checks that the node
//! still exists, so a lost lock and an expired session show in the history as failed renewals.

use crate::client::kind::{ClientKind, ClientOptions, Plain, Runs};
use crate::client::lock::{Grant, LockClient, LockSession, Outcome};
use crate::client::pause::PausePoints;
use crate::client::pause_gate::PauseGate;
use crate::vocab::MsRange;
use crate::vocab::{ClientTable, ScenarioError};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use zookeeper_client::{Acls, Client, CreateMode, Error as ZkError, SessionState};

/// Settings shared by every session of one run.
#[derive(Debug)]
struct Config {
    servers: Vec<SocketAddr>,
    /// `/locks/<name>`.
    dir: String,
    session_timeout: Duration,
    op_timeout: Duration,
    retry_delay: MsRange,
}

/// Makes sessions of the ZooKeeper lock on an ensemble reached through the server proxies.
pub struct ZkLock {
    config: Arc<Config>,
}

impl ZkLock {
    /// `ttl_ms` becomes the session timeout; precondition: the servers allow it (2 to 20
    /// ticks).
    pub fn new(
        servers: &[SocketAddr],
        lock: &str,
        ttl_ms: u64,
        op_timeout_ms: u64,
        retry_delay: MsRange,
    ) -> ZkLock {
        ZkLock {
            config: Arc::new(Config {
                servers: servers.to_vec(),
                dir: format!("/locks/{lock}"),
                session_timeout: Duration::from_millis(ttl_ms),
                op_timeout: Duration::from_millis(op_timeout_ms),
                retry_delay,
            }),
        }
    }

    async fn open(&self, seed: u64, gate: Option<Arc<PauseGate>>) -> Result<ZkSession, String> {
        let servers = match &gate {
            Some(gate) => gate.addrs().to_vec(),
            None => self.config.servers.clone(),
        };
        let client = open_client(&self.config, &servers).await?;
        Ok(ZkSession {
            config: self.config.clone(),
            servers,
            client,
            _gate: gate,
            rng: ChaCha8Rng::seed_from_u64(seed),
            held: Arc::default(),
        })
    }
}

/// A new ZooKeeper session on `servers`, with the lock's folder in place.
async fn open_client(config: &Config, servers: &[SocketAddr]) -> Result<Client, String> {
    let cluster: Vec<String> = servers.iter().map(SocketAddr::to_string).collect();
    let cluster = cluster.join(",");
    let connect = Client::connector()
        .with_session_timeout(config.session_timeout)
        // As the Java client: a connection silent for two thirds of the session is given up.
        .with_connection_timeout(config.session_timeout * 2 / 3)
        // Dropped, the session is not closed: the connection goes, and ZooKeeper expires the
        // session (and deletes its lock node) a session timeout later, as for a process that
        // died. Closed instead, a `client-crash` of a built-in client let its lock go at once,
        // which no killed process does (a rival granted 18 ms after the crash).
        .with_detached()
        .connect(&cluster);
    let client = match tokio::time::timeout(config.op_timeout * 4, connect).await {
        Ok(Ok(client)) => client,
        Ok(Err(e)) => return Err(describe(&e)),
        Err(_) => return Err("connect timeout".to_owned()),
    };
    let folder = CreateMode::Persistent.with_acls(Acls::anyone_all());
    match request(config.op_timeout, client.mkdir(&config.dir, &folder)).await {
        Outcome::Ok(()) => Ok(client),
        Outcome::Fail(e) | Outcome::Info(e) => Err(e),
    }
}

/// One process's ZooKeeper session.
#[derive(Clone)]
pub struct ZkSession {
    config: Arc<Config>,
    servers: Vec<SocketAddr>,
    client: Client,
    /// Keeps the pause relays open as long as a clone of the session lives.
    _gate: Option<Arc<PauseGate>>,
    rng: ChaCha8Rng,
    /// The path of the node this session holds or waits with; shared with the watchdog.
    held: Arc<Mutex<Option<String>>>,
}

impl LockClient for ZkLock {
    type Session = ZkSession;

    async fn connect(&self, seed: u64) -> Result<ZkSession, String> {
        self.open(seed, None).await
    }

    async fn connect_pausable(
        &self,
        seed: u64,
        points: Arc<PausePoints>,
    ) -> Result<ZkSession, String> {
        let gate = PauseGate::open(&self.config.servers, points)
            .await
            .map_err(|e| format!("open pause relays: {e}"))?;
        self.open(seed, Some(Arc::new(gate))).await
    }

    fn lease_ms(&self) -> Option<u64> {
        Some(self.config.session_timeout.as_millis() as u64)
    }
}

fn describe(e: &ZkError) -> String {
    match e {
        ZkError::SessionExpired => "session-expired".to_owned(),
        ZkError::ConnectionLoss => "connection-loss".to_owned(),
        other => other.to_string().to_lowercase(),
    }
}

/// Runs one request with the operation time limit. Errors the server answered (the request
/// was not applied) are `Fail`; anything else (a lost connection, a timeout, a client-side
/// error) leaves it unknown: `Info`.
async fn request<T>(
    timeout: Duration,
    call: impl Future<Output = Result<T, ZkError>>,
) -> Outcome<T> {
    match tokio::time::timeout(timeout, call).await {
        Ok(Ok(v)) => Outcome::Ok(v),
        Ok(Err(
            e @ (ZkError::NoNode
            | ZkError::NodeExists
            | ZkError::BadVersion
            | ZkError::NotEmpty
            | ZkError::NoChildrenForEphemerals
            | ZkError::SessionExpired
            | ZkError::NoAuth
            | ZkError::InvalidAcl
            | ZkError::BadArguments(_)),
        )) => Outcome::Fail(describe(&e)),
        Ok(Err(e)) => Outcome::Info(describe(&e)),
        Err(_) => Outcome::Info("timeout".to_owned()),
    }
}

/// The sequence number at the end of a lock node's name.
fn sequence(node: &str) -> Option<i64> {
    node.rsplit_once("-lock-").and_then(|(_, n)| n.parse().ok())
}

impl ZkSession {
    async fn pause_before_retry(&mut self) {
        let ms = self.config.retry_delay.draw(&mut self.rng);
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }

    /// The children of the lock folder, sorted by sequence number.
    async fn queue(&self) -> Outcome<Vec<String>> {
        request(
            self.config.op_timeout,
            self.client.list_children(&self.config.dir),
        )
        .await
        .map(|mut children| {
            children.retain(|c| sequence(c).is_some());
            children.sort_by_key(|c| sequence(c));
            children
        })
    }

    /// Creates this acquire's node, `guid` its data, resolving a lost answer by looking for
    /// `guid` among the children (the same session's later requests are ordered after the
    /// create). Returns the node's name.
    async fn create_node(&mut self, guid: &str, deadline: Instant) -> Outcome<String> {
        let prefix = format!("{guid}-lock-");
        let path = format!("{}/{prefix}", self.config.dir);
        let mode = CreateMode::EphemeralSequential.with_acls(Acls::anyone_all());
        loop {
            let created = request(
                self.config.op_timeout,
                self.client.create(&path, guid.as_bytes(), &mode),
            )
            .await;
            match created {
                Outcome::Ok((_, seq)) => return Outcome::Ok(format!("{prefix}{seq}")),
                Outcome::Fail(e) => return Outcome::Fail(e),
                Outcome::Info(e) => {
                    // Did it happen? Ask the session's own view once it is connected again.
                    loop {
                        if Instant::now() >= deadline {
                            return Outcome::Info(e);
                        }
                        match self.queue().await {
                            Outcome::Ok(children) => {
                                if let Some(mine) =
                                    children.into_iter().find(|c| c.starts_with(&prefix))
                                {
                                    return Outcome::Ok(mine);
                                }
                                break;
                            }
                            Outcome::Fail(e) => return Outcome::Fail(e),
                            Outcome::Info(_) => self.pause_before_retry().await,
                        }
                    }
                }
            }
        }
    }

    /// Waits until `node` is the lowest in the queue, watching only its predecessor. `Fail`
    /// when the node is gone (session expired) or the deadline passed.
    async fn wait_for_turn(&mut self, node: &str, deadline: Instant) -> Outcome<()> {
        loop {
            if Instant::now() >= deadline {
                return Outcome::Fail("timeout".to_owned());
            }
            let children = match self.queue().await {
                Outcome::Ok(c) => c,
                Outcome::Fail(e) => return Outcome::Fail(e),
                Outcome::Info(_) => {
                    self.pause_before_retry().await;
                    continue;
                }
            };
            let Some(place) = children.iter().position(|c| c == node) else {
                return Outcome::Fail("lost".to_owned());
            };
            if place == 0 {
                return Outcome::Ok(());
            }
            let predecessor = format!("{}/{}", self.config.dir, children[place - 1]);
            let watched = request(
                self.config.op_timeout,
                self.client.check_and_watch_stat(&predecessor),
            )
            .await;
            match watched {
                // Gone already: look again.
                Outcome::Ok((None, _)) => {}
                Outcome::Ok((Some(_), watcher)) => {
                    let _ = tokio::time::timeout_at(deadline.into(), watcher.changed()).await;
                }
                Outcome::Fail(e) => return Outcome::Fail(e),
                Outcome::Info(_) => self.pause_before_retry().await,
            }
        }
    }

    /// A fresh session if this one is over (expired, closed), as a restarted client would.
    async fn ensure_live(&mut self) -> Outcome<()> {
        let over = matches!(
            self.client.state(),
            SessionState::Expired | SessionState::Closed | SessionState::AuthFailed
        );
        if over {
            match open_client(&self.config, &self.servers).await {
                Ok(client) => self.client = client,
                Err(e) => return Outcome::Fail(e),
            }
        }
        Outcome::Ok(())
    }
}

impl LockSession for ZkSession {
    async fn acquire(&mut self, holder: &str, deadline: Instant) -> Outcome<Grant> {
        if let Outcome::Fail(e) = self.ensure_live().await {
            return Outcome::Fail(e);
        }
        let node = match self.create_node(holder, deadline).await {
            Outcome::Ok(node) => node,
            Outcome::Fail(e) => return Outcome::Fail(e),
            Outcome::Info(e) => return Outcome::Info(e),
        };
        let path = format!("{}/{node}", self.config.dir);
        *self.held.lock().unwrap_or_else(|p| p.into_inner()) = Some(path.clone());
        match self.wait_for_turn(&node, deadline).await {
            Outcome::Ok(()) => {}
            Outcome::Fail(e) => {
                // Best effort: an expired session took the node already.
                let _ = request(self.config.op_timeout, self.client.delete(&path, None)).await;
                return Outcome::Fail(e);
            }
            Outcome::Info(e) => return Outcome::Info(e),
        }
        Outcome::Ok(Grant {
            token: sequence(&node).map(|s| s as u64),
            holder: holder.to_owned(),
            lease_ms: Some(self.config.session_timeout.as_millis() as u64),
            sent_at: Instant::now(),
            // Granted by waiting: no one request decides it.
            request_sent: None,
            owner: None,
        })
    }

    async fn release(&mut self, _grant: &Grant) -> Outcome<()> {
        let Some(path) = self.held.lock().unwrap_or_else(|p| p.into_inner()).take() else {
            return Outcome::Fail("not-owner".to_owned());
        };
        match request(self.config.op_timeout, self.client.delete(&path, None)).await {
            Outcome::Ok(()) => Outcome::Ok(()),
            Outcome::Fail(e) if e == "session-expired" => Outcome::Fail(e),
            Outcome::Fail(_) => Outcome::Fail("not-owner".to_owned()),
            Outcome::Info(e) => Outcome::Info(e),
        }
    }

    async fn renew(&mut self, _grant: &Grant) -> Outcome<()> {
        let held = self.held.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let Some(path) = held else {
            return Outcome::Fail("lost".to_owned());
        };
        match request(self.config.op_timeout, self.client.check_stat(&path)).await {
            Outcome::Ok(Some(_)) => Outcome::Ok(()),
            Outcome::Ok(None) => Outcome::Fail("lost".to_owned()),
            Outcome::Fail(e) => Outcome::Fail(e),
            Outcome::Info(e) => Outcome::Info(e),
        }
    }

    /// A check is one request on the session's multiplexed connection: dropped, its answer is
    /// discarded when it comes.
    fn renewal_may_be_dropped(&self) -> bool {
        true
    }
}

/// `[client] kind = "zookeeper"`, on every server of a `zookeeper` ensemble.
pub(super) static KIND: ZkKind = ZkKind;

pub(super) struct ZkKind;

impl ClientKind for ZkKind {
    fn name(&self) -> &'static str {
        "zookeeper"
    }

    fn about(&self) -> &'static str {
        "ZooKeeper's lock recipe: ephemeral sequential nodes, the session is the lease; token: sequence number"
    }

    fn runs_on(&self) -> Runs {
        Runs::On(&["zookeeper"])
    }

    fn options(&self, table: &ClientTable<'_>) -> Result<Arc<dyn ClientOptions>, ScenarioError> {
        Plain::read(table, |lock, at| {
            Box::new(Arc::new(ZkLock::new(
                &at.addrs(),
                &lock.name,
                lock.ttl_ms,
                lock.op_timeout_ms,
                lock.retry_delay_ms,
            )))
        })
    }
}
