//! The etcd lock, as etcd's own concurrency mutex takes it: a lease with a TTL, a key under
//! the lock prefix created in a transaction with that lease, the owner is the key with the
//! lowest create revision, and a waiter watches only the deletion of its predecessor. The
//! fencing token is the key's create revision. Release deletes the key and revokes the lease;
//! renewal is one lease keep-alive (the driver's watchdog runs it, and stands still while the
//! client is paused, as a GC pause stops a real keep-alive thread).

use crate::client::kind::{ClientKind, ClientOptions, Plain, Runs};
use crate::client::lock::{Grant, LockClient, LockSession, Outcome};
use crate::vocab::MsRange;
use crate::vocab::{ClientTable, ScenarioError};
use etcd_client::{
    Client, Compare, CompareOp, ConnectOptions, EventType, GetOptions, SortOrder, SortTarget, Txn,
    TxnOp, TxnOpResponse, WatchOptions,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// gRPC's status code UNAVAILABLE, with which etcd refuses requests when it has no leader.
const GRPC_UNAVAILABLE: i32 = 14;
/// gRPC's status code NOT_FOUND, with which etcd answers for a lease that no longer exists.
const GRPC_NOT_FOUND: i32 = 5;

/// Settings shared by every session of one run (of this recipe or of etcd's lock service).
#[derive(Debug)]
pub(super) struct Config {
    endpoints: Vec<String>,
    /// The key prefix of the recipe; the lock name given to the lock service.
    pub(super) prefix: String,
    pub(super) ttl_ms: u64,
    pub(super) op_timeout: Duration,
    pub(super) retry_delay: MsRange,
}

impl Config {
    /// Precondition: `ttl_ms` is a whole number of seconds, at least one (etcd leases have
    /// second granularity; the `etcd` server kind checks it).
    pub(super) fn new(
        endpoints: &[SocketAddr],
        prefix: String,
        ttl_ms: u64,
        op_timeout_ms: u64,
        retry_delay: MsRange,
    ) -> Arc<Config> {
        Arc::new(Config {
            endpoints: endpoints.iter().map(|a| format!("http://{a}")).collect(),
            prefix,
            ttl_ms,
            op_timeout: Duration::from_millis(op_timeout_ms),
            retry_delay,
        })
    }

    /// A client of the cluster; with `per_request_limit`, every request is cut at the
    /// operation time limit (not for a Lock call, which waits on the server). A member cut off
    /// from its leader fails requests and watch streams at once ("no leader") instead of
    /// leaving them to time out, as etcd advises for lock clients.
    pub(super) async fn connect(&self, per_request_limit: bool) -> Result<Client, String> {
        let mut options = ConnectOptions::new()
            .with_connect_timeout(self.op_timeout)
            .with_require_leader(true);
        if per_request_limit {
            options = options.with_timeout(self.op_timeout);
        }
        Client::connect(&self.endpoints, Some(options))
            .await
            .map_err(|e| describe(&e))
    }
}

/// Makes sessions of the etcd lock on a cluster reached through the member proxies.
pub struct EtcdLock {
    config: Arc<Config>,
}

impl EtcdLock {
    /// Precondition: `ttl_ms` is a whole number of seconds, at least one (etcd leases have
    /// second granularity).
    pub fn new(
        endpoints: &[SocketAddr],
        lock: &str,
        ttl_ms: u64,
        op_timeout_ms: u64,
        retry_delay: MsRange,
    ) -> EtcdLock {
        EtcdLock {
            config: Config::new(
                endpoints,
                format!("lockpick/lock/{lock}/"),
                ttl_ms,
                op_timeout_ms,
                retry_delay,
            ),
        }
    }
}

/// What the session holds or waits with: its key and the lease the key is attached to.
#[derive(Debug, Clone)]
struct Held {
    key: String,
    lease: i64,
}

/// One process's client of the cluster.
#[derive(Clone)]
pub struct EtcdSession {
    config: Arc<Config>,
    client: Client,
    rng: ChaCha8Rng,
    /// Shared with the watchdog's clone, which renews this lease.
    held: Arc<Mutex<Option<Held>>>,
}

impl LockClient for EtcdLock {
    type Session = EtcdSession;

    async fn connect(&self, seed: u64) -> Result<EtcdSession, String> {
        let client = self.config.connect(true).await?;
        Ok(EtcdSession {
            config: self.config.clone(),
            client,
            rng: ChaCha8Rng::seed_from_u64(seed),
            held: Arc::default(),
        })
    }

    fn lease_ms(&self) -> Option<u64> {
        Some(self.config.ttl_ms)
    }
}

/// A few words for an etcd error: the gRPC code and message, or the error's text.
pub(super) fn describe(e: &etcd_client::Error) -> String {
    match e {
        etcd_client::Error::GRpcStatus(status) => {
            format!("{:?}: {}", status.code(), status.message()).to_lowercase()
        }
        other => other.to_string().to_lowercase(),
    }
}

/// Runs one request with the operation time limit: `Info` when it timed out or failed in a
/// way that leaves its effect unknown; `Fail("no-leader")` when the member refused it for
/// want of a leader (required with every request, so it is refused before it is applied);
/// `Fail("lease-not-found")` when the lease it names is gone.
pub(super) async fn request<T>(
    timeout: Duration,
    call: impl Future<Output = Result<T, etcd_client::Error>>,
) -> Outcome<T> {
    match tokio::time::timeout(timeout, call).await {
        Ok(Ok(v)) => Outcome::Ok(v),
        Ok(Err(etcd_client::Error::GRpcStatus(status)))
            if status.code() as i32 == GRPC_UNAVAILABLE
                && status.message().contains("no leader") =>
        {
            Outcome::Fail("no-leader".to_owned())
        }
        Ok(Err(etcd_client::Error::GRpcStatus(status)))
            if status.code() as i32 == GRPC_NOT_FOUND
                && status.message().contains("lease not found") =>
        {
            Outcome::Fail("lease-not-found".to_owned())
        }
        Ok(Err(e)) => Outcome::Info(describe(&e)),
        Err(_) => Outcome::Info("timeout".to_owned()),
    }
}

/// One lease keep-alive; `Ok(sent_at)` when the lease lives, `Fail("lost")` when the
/// cluster says it is gone.
pub(super) async fn keep_alive(
    client: &mut Client,
    timeout: Duration,
    lease: i64,
) -> Outcome<Instant> {
    let sent_at = Instant::now();
    match tokio::time::timeout(timeout, client.lease_keep_alive(lease)).await {
        Ok(Ok(_)) => Outcome::Ok(sent_at),
        Ok(Err(etcd_client::Error::LeaseKeepAliveError(_))) => Outcome::Fail("lost".to_owned()),
        Ok(Err(e)) => Outcome::Info(describe(&e)),
        Err(_) => Outcome::Info("timeout".to_owned()),
    }
}

/// Grants a lease of `ttl_ms` (whole seconds, at least one), retrying until `deadline`:
/// `(lease, the TTL the cluster granted in ms, when its grant was sent)`. The granted TTL is
/// read back because etcd may raise it to its minimum (1.5 election timeouts, in whole
/// seconds): it is the lease the history records, and what a fair fault is sized against. A lost or failed grant leaves only an unused lease
/// that expires, so retrying is safe. The error reads after "failed to acquire: ".
pub(super) async fn grant_lease(
    client: &mut Client,
    ttl_ms: u64,
    timeout: Duration,
    deadline: Instant,
    retry_delay: MsRange,
    rng: &mut ChaCha8Rng,
) -> Result<(i64, u64, Instant), String> {
    let ttl_s = (ttl_ms / 1000).max(1) as i64;
    loop {
        let sent = Instant::now();
        match request(timeout, client.lease_grant(ttl_s, None)).await {
            Outcome::Ok(r) => {
                let granted_ms = u64::try_from(r.ttl()).unwrap_or(0).saturating_mul(1000);
                return Ok((r.id(), granted_ms, sent));
            }
            Outcome::Fail(e) | Outcome::Info(e) => {
                if Instant::now() >= deadline {
                    return Err(format!("lease grant: {e}"));
                }
                let ms = retry_delay.draw(rng);
                tokio::time::sleep(Duration::from_millis(ms)).await;
            }
        }
    }
}

/// How a wait for the predecessors ended.
enum Waited {
    /// No key older than ours is left.
    Owner,
    /// Our lease or key is gone (expired while we waited).
    Lost(String),
    /// The deadline passed first.
    TimedOut,
}

impl EtcdSession {
    async fn keep_alive(&mut self, lease: i64) -> Outcome<Instant> {
        keep_alive(&mut self.client, self.config.op_timeout, lease).await
    }

    /// Waits until no key of the lock older than `my_rev` is left, watching only the newest
    /// older one (its deletion is all that can make us the owner: no herd), and keeping the
    /// lease alive meanwhile. Errors of single requests are retried until `deadline`.
    async fn wait_for_predecessors(
        &mut self,
        held: &Held,
        my_rev: i64,
        deadline: Instant,
        lease_sent: &mut Instant,
    ) -> Waited {
        let keep_every = Duration::from_millis(self.config.ttl_ms / 3);
        loop {
            if Instant::now() >= deadline {
                return Waited::TimedOut;
            }
            if lease_sent.elapsed() >= keep_every {
                match self.keep_alive(held.lease).await {
                    Outcome::Ok(at) => *lease_sent = at,
                    Outcome::Fail(_) => return Waited::Lost("lease-expired".to_owned()),
                    Outcome::Info(_) => {}
                }
            }
            let options = GetOptions::new()
                .with_prefix()
                .with_max_create_revision(my_rev - 1)
                .with_sort(SortTarget::Create, SortOrder::Descend)
                .with_limit(1);
            let timeout = self.config.op_timeout;
            let got = request(
                timeout,
                self.client.get(self.config.prefix.clone(), Some(options)),
            )
            .await;
            let Outcome::Ok(got) = got else {
                self.pause_before_retry().await;
                continue;
            };
            let Some(predecessor) = got.kvs().first() else {
                // Our own key must still be there: a lease that expired while we waited took
                // it with it, and then we are not the owner at all.
                let mine = request(timeout, self.client.get(held.key.clone(), None)).await;
                return match mine {
                    Outcome::Ok(r) if r.kvs().is_empty() => {
                        Waited::Lost("lease-expired".to_owned())
                    }
                    Outcome::Ok(_) => Waited::Owner,
                    _ => {
                        self.pause_before_retry().await;
                        continue;
                    }
                };
            };
            let revision = got.header().map_or(0, |h| h.revision());
            let watch_options = WatchOptions::new().with_start_revision(revision + 1);
            let key = predecessor.key().to_vec();
            let Outcome::Ok(mut stream) =
                request(timeout, self.client.watch(key, Some(watch_options))).await
            else {
                self.pause_before_retry().await;
                continue;
            };
            // Until the predecessor is deleted, the lease needs keeping or the deadline passes.
            loop {
                let wake = (*lease_sent + keep_every).min(deadline);
                tokio::select! {
                    message = stream.message() => match message {
                        Ok(Some(resp)) => {
                            if resp.events().iter().any(|e| e.event_type() == EventType::Delete) {
                                break;
                            }
                            if resp.canceled() {
                                break;
                            }
                        }
                        // The stream broke (partition, member gone): look again.
                        _ => break,
                    },
                    _ = tokio::time::sleep_until(wake.into()) => break,
                }
            }
        }
    }

    async fn pause_before_retry(&mut self) {
        let ms = self.config.retry_delay.draw(&mut self.rng);
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }

    /// Best-effort removal of a key we gave up waiting with, and of its lease.
    async fn abandon(&mut self, held: &Held) {
        let timeout = self.config.op_timeout;
        let _ = request(timeout, self.client.delete(held.key.clone(), None)).await;
        let _ = request(timeout, self.client.lease_revoke(held.lease)).await;
    }
}

impl LockSession for EtcdSession {
    async fn acquire(&mut self, holder: &str, deadline: Instant) -> Outcome<Grant> {
        let timeout = self.config.op_timeout;
        let (lease, granted_ms, mut lease_sent) = match grant_lease(
            &mut self.client,
            self.config.ttl_ms,
            timeout,
            deadline,
            self.config.retry_delay,
            &mut self.rng,
        )
        .await
        {
            Ok(granted) => granted,
            Err(e) => return Outcome::Fail(e),
        };
        let held = Held {
            key: format!("{}{holder}", self.config.prefix),
            lease,
        };
        let owner_query = || {
            TxnOp::get(
                self.config.prefix.clone(),
                Some(
                    GetOptions::new()
                        .with_prefix()
                        .with_sort(SortTarget::Create, SortOrder::Ascend)
                        .with_limit(1),
                ),
            )
        };
        let txn = Txn::new()
            .when([Compare::create_revision(
                held.key.clone(),
                CompareOp::Equal,
                0,
            )])
            .and_then([
                TxnOp::put(
                    held.key.clone(),
                    holder,
                    Some(etcd_client::PutOptions::new().with_lease(lease)),
                ),
                owner_query(),
            ])
            .or_else([TxnOp::get(held.key.clone(), None), owner_query()]);
        let created = match request(timeout, self.client.txn(txn)).await {
            Outcome::Ok(r) => r,
            Outcome::Fail(e) => {
                let _ = request(timeout, self.client.lease_revoke(lease)).await;
                return Outcome::Fail(e);
            }
            // The key may or may not exist now; its lease, kept by nobody, removes it in a TTL.
            Outcome::Info(e) => return Outcome::Info(e),
        };
        let my_rev = match created.op_responses().first() {
            Some(TxnOpResponse::Get(r)) => r.kvs().first().map_or(0, |kv| kv.create_revision()),
            _ => created.header().map_or(0, |h| h.revision()),
        };
        let owner_rev = match created.op_responses().get(1) {
            Some(TxnOpResponse::Get(r)) => r.kvs().first().map(|kv| kv.create_revision()),
            _ => None,
        };
        *self.held.lock().unwrap_or_else(|p| p.into_inner()) = Some(held.clone());
        if owner_rev != Some(my_rev) {
            match self
                .wait_for_predecessors(&held, my_rev, deadline, &mut lease_sent)
                .await
            {
                Waited::Owner => {}
                Waited::Lost(e) => return Outcome::Fail(e),
                Waited::TimedOut => {
                    self.abandon(&held).await;
                    return Outcome::Fail("timeout".to_owned());
                }
            }
        }
        Outcome::Ok(Grant {
            token: Some(my_rev as u64),
            holder: holder.to_owned(),
            lease_ms: Some(granted_ms),
            // The lease runs from the last keep-alive (or grant) the cluster acknowledged.
            sent_at: lease_sent,
            // Granted by waiting: no one request decides it.
            request_sent: None,
            owner: None,
        })
    }

    async fn release(&mut self, _grant: &Grant) -> Outcome<()> {
        let Some(held) = self.held.lock().unwrap_or_else(|p| p.into_inner()).take() else {
            return Outcome::Fail("not-owner".to_owned());
        };
        let timeout = self.config.op_timeout;
        let deleted = request(timeout, self.client.delete(held.key.clone(), None))
            .await
            .map(|r| r.deleted());
        let revoked = request(timeout, self.client.lease_revoke(held.lease)).await;
        release_outcome(deleted, revoked.map(|_| ()))
    }

    async fn renew(&mut self, _grant: &Grant) -> Outcome<()> {
        let held = self.held.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let Some(held) = held else {
            return Outcome::Fail("lost".to_owned());
        };
        self.keep_alive(held.lease).await.map(|_| ())
    }

    /// A keep-alive is one gRPC stream on the client's shared channel: dropped, it is cancelled.
    fn renewal_may_be_dropped(&self) -> bool {
        true
    }

    /// The recipe counts its lease from its last acknowledged keep-alive (the grant's
    /// `sent_at`) and stops trusting the lock when that runs out.
    fn stops_at_own_lease_count(&self) -> bool {
        true
    }
}

/// What a release was, from its delete (keys deleted) and its lease revoke.
fn release_outcome(deleted: Outcome<i64>, revoked: Outcome<()>) -> Outcome<()> {
    match (deleted, revoked) {
        (Outcome::Ok(n), _) if n > 0 => Outcome::Ok(()),
        (Outcome::Ok(_), _) => Outcome::Fail("not-owner".to_owned()),
        // Revoking the lease deleted the key with it, whatever became of the delete.
        (_, Outcome::Ok(())) => Outcome::Ok(()),
        // The lease is gone and the delete definitely did not run: the key expired before.
        (Outcome::Fail(_), Outcome::Fail(e)) if e == "lease-not-found" => {
            Outcome::Fail("not-owner".to_owned())
        }
        (Outcome::Fail(e), Outcome::Fail(_)) => Outcome::Fail(e),
        // A delete whose reply was lost may have freed the lock before the lease ran out
        // (found by the safety matrix: a partition cut the reply, the next holder got the
        // lock at once, and "not-owner" claimed the release never happened).
        (Outcome::Info(e), _) | (_, Outcome::Info(e)) => Outcome::Info(e),
    }
}

/// `[client] kind = "etcd"`, on every member of an `etcd` server.
pub(super) static KIND: EtcdKind = EtcdKind;

pub(super) struct EtcdKind;

impl ClientKind for EtcdKind {
    fn name(&self) -> &'static str {
        "etcd"
    }

    fn about(&self) -> &'static str {
        "etcd's concurrency mutex recipe: lease + keep-alive, lowest create revision holds; token: create revision"
    }

    fn runs_on(&self) -> Runs {
        Runs::On(&["etcd"])
    }

    fn options(&self, table: &ClientTable<'_>) -> Result<Arc<dyn ClientOptions>, ScenarioError> {
        Plain::read(table, |lock, at| {
            Box::new(Arc::new(EtcdLock::new(
                &at.addrs(),
                &lock.name,
                lock.ttl_ms,
                lock.op_timeout_ms,
                lock.retry_delay_ms,
            )))
        })
    }
}

#[cfg(test)]
mod release_tests {
    use super::*;

    fn info() -> Outcome<i64> {
        Outcome::Info("timeout".to_owned())
    }

    #[test]
    fn a_release_whose_delete_is_unknown_is_unknown_even_if_the_lease_is_gone() {
        let gone = || Outcome::Fail("lease-not-found".to_owned());
        assert!(matches!(release_outcome(info(), gone()), Outcome::Info(e) if e == "timeout"));
        assert!(
            matches!(release_outcome(Outcome::Fail("no-leader".into()), gone()), Outcome::Fail(e) if e == "not-owner")
        );
        assert!(matches!(
            release_outcome(Outcome::Ok(1), gone()),
            Outcome::Ok(())
        ));
        assert!(
            matches!(release_outcome(Outcome::Ok(0), Outcome::Ok(())), Outcome::Fail(e) if e == "not-owner")
        );
        assert!(matches!(
            release_outcome(info(), Outcome::Ok(())),
            Outcome::Ok(())
        ));
    }
}
