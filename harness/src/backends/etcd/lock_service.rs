//! `etcd-lock-service`: etcd's own server-side lock (the v3lock `Lock`/`Unlock` RPCs, through
//! etcd-client's lock API), used as its documentation says: grant a lease, `Lock(name, lease)`
//! (the server waits until the lock is ours and answers with a key that exists as long as we
//! hold it), keep the lease alive, `Unlock(key)` and revoke the lease.
//!
//! Fencing token: the create revision of the returned key, read with one `Get` right after the
//! grant. The server grants in create-revision order (its mutex: the lowest create revision
//! under the lock's prefix holds), so tokens grow with the order of holders, as for the etcd
//! recipe. The Lock reply itself carries only a header revision, which also grows, but the
//! create revision is what etcd's documentation offers for fencing; a key already gone when it
//! is read means the lease expired in between: the acquire fails ("lost"), since this client
//! never acted as holder.
//!
//! The Lock call waits on the server, so this client sets no per-request time limit on the
//! connection: every other request gets `op_timeout_ms`, the Lock the acquire deadline, and
//! the lease is kept alive while the server makes it wait.

use crate::backends::etcd::lock::{describe, grant_lease, keep_alive, request, Config};
use crate::client::kind::{ClientKind, ClientOptions, Plain, Runs};
use crate::client::lock::{Grant, LockClient, LockSession, Outcome};
use crate::vocab::{ClientTable, MsRange, ScenarioError};
use etcd_client::{Client, LockOptions};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Makes sessions of etcd's lock service on a cluster reached through the member proxies.
pub struct EtcdLockService {
    config: Arc<Config>,
}

impl EtcdLockService {
    /// Precondition: `ttl_ms` is a whole number of seconds, at least one (etcd leases have
    /// second granularity; the `etcd` server kind checks it).
    pub fn new(
        endpoints: &[SocketAddr],
        lock: &str,
        ttl_ms: u64,
        op_timeout_ms: u64,
        retry_delay: MsRange,
    ) -> EtcdLockService {
        EtcdLockService {
            config: Config::new(
                endpoints,
                format!("lockpick/lock-service/{lock}"),
                ttl_ms,
                op_timeout_ms,
                retry_delay,
            ),
        }
    }
}

/// What a holder holds: the key the server returned and the lease it is attached to.
#[derive(Debug, Clone)]
struct Held {
    key: Vec<u8>,
    lease: i64,
}

/// One process's client of the lock service.
#[derive(Clone)]
pub struct EtcdLockServiceSession {
    config: Arc<Config>,
    client: Client,
    rng: ChaCha8Rng,
    /// Shared with the watchdog's clone, which renews this lease.
    held: Arc<Mutex<Option<Held>>>,
}

impl LockClient for EtcdLockService {
    type Session = EtcdLockServiceSession;

    async fn connect(&self, seed: u64) -> Result<EtcdLockServiceSession, String> {
        // No per-request limit: the Lock call waits on the server until the lock is ours.
        let client = self.config.connect(false).await?;
        Ok(EtcdLockServiceSession {
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

impl EtcdLockServiceSession {
    async fn keep_alive(&mut self, lease: i64) -> Outcome<Instant> {
        keep_alive(&mut self.client, self.config.op_timeout, lease).await
    }

    /// `Lock(name, lease)`, waiting on the server until `deadline` while keeping the lease
    /// alive. `Ok(key)` once held; `Err(outcome)` otherwise.
    async fn lock(
        &mut self,
        lease: i64,
        deadline: Instant,
        lease_sent: &mut Instant,
    ) -> Result<Vec<u8>, Outcome<Grant>> {
        let keep_every = Duration::from_millis(self.config.ttl_ms / 3);
        // A clone shares the connection; the keep-alives go out on `self.client` meanwhile.
        let mut locker = self.client.clone();
        let call = locker.lock(
            self.config.prefix.clone(),
            Some(LockOptions::new().with_lease(lease)),
        );
        tokio::pin!(call);
        loop {
            let wake = (*lease_sent + keep_every).min(deadline);
            tokio::select! {
                answer = &mut call => return match answer {
                    Ok(r) => Ok(r.key().to_vec()),
                    Err(e) => Err(self.give_up(lease, describe(&e)).await),
                },
                _ = tokio::time::sleep_until(wake.into()) => {
                    if Instant::now() >= deadline {
                        return Err(self.give_up(lease, "timeout".to_owned()).await);
                    }
                    match self.keep_alive(lease).await {
                        Outcome::Ok(at) => *lease_sent = at,
                        Outcome::Fail(_) => return Err(Outcome::Fail("lease-expired".to_owned())),
                        Outcome::Info(_) => {}
                    }
                }
            }
        }
    }

    /// After a Lock that failed or was abandoned: the server may still grant it to our lease
    /// (a cancel that did not reach it), so the lease is revoked, which deletes any key of
    /// ours. Revoked: the acquire definitely failed; otherwise its outcome is unknown.
    async fn give_up(&mut self, lease: i64, why: String) -> Outcome<Grant> {
        match request(self.config.op_timeout, self.client.lease_revoke(lease)).await {
            Outcome::Ok(_) => Outcome::Fail(why),
            Outcome::Fail(e) if e == "lease-not-found" => Outcome::Fail(why),
            Outcome::Fail(e) | Outcome::Info(e) => Outcome::Info(format!("{why}; revoke: {e}")),
        }
    }
}

impl LockSession for EtcdLockServiceSession {
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
        let key = match self.lock(lease, deadline, &mut lease_sent).await {
            Ok(key) => key,
            Err(outcome) => return outcome,
        };
        *self.held.lock().unwrap_or_else(|p| p.into_inner()) = Some(Held {
            key: key.clone(),
            lease,
        });
        let token = match request(timeout, self.client.get(key, None)).await {
            Outcome::Ok(r) => match r.kvs().first() {
                Some(kv) => kv.create_revision() as u64,
                None => {
                    self.held.lock().unwrap_or_else(|p| p.into_inner()).take();
                    return Outcome::Fail("lost".to_owned());
                }
            },
            // Held, but without a token this client cannot act: unknown, and the lease, kept
            // by nobody once the process retires, frees the lock in a TTL.
            Outcome::Fail(e) | Outcome::Info(e) => {
                return Outcome::Info(format!("read the key's revision: {e}"))
            }
        };
        Outcome::Ok(Grant {
            token: Some(token),
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
        // Unlock deletes the key whether or not it still existed, so whether the lock was
        // still ours shows in the lease: revoking an expired one is "lease not found".
        let unlocked = request(timeout, self.client.unlock(held.key.clone())).await;
        let revoked = request(timeout, self.client.lease_revoke(held.lease)).await;
        match (unlocked, revoked) {
            (_, Outcome::Ok(_)) => Outcome::Ok(()),
            // The lease had expired and the unlock definitely ran or definitely did not: the
            // key was gone either way. An unlock whose reply was lost may have freed a live
            // lock, so that stays unknown (the last arm).
            (Outcome::Ok(_) | Outcome::Fail(_), Outcome::Fail(e)) if e == "lease-not-found" => {
                Outcome::Fail("not-owner".to_owned())
            }
            (Outcome::Fail(e), Outcome::Fail(_)) => Outcome::Fail(e),
            (_, Outcome::Fail(e) | Outcome::Info(e)) => Outcome::Info(e),
        }
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

/// `[client] kind = "etcd-lock-service"`, on every member of an `etcd` server.
pub(super) static KIND: EtcdLockServiceKind = EtcdLockServiceKind;

pub(super) struct EtcdLockServiceKind;

impl ClientKind for EtcdLockServiceKind {
    fn name(&self) -> &'static str {
        "etcd-lock-service"
    }

    fn about(&self) -> &'static str {
        "etcd's server-side Lock/Unlock RPCs with a kept-alive lease; token: the lock key's create revision"
    }

    fn runs_on(&self) -> Runs {
        Runs::On(&["etcd"])
    }

    fn options(&self, table: &ClientTable<'_>) -> Result<Arc<dyn ClientOptions>, ScenarioError> {
        Plain::read(table, |lock, at| {
            Box::new(Arc::new(EtcdLockService::new(
                &at.addrs(),
                &lock.name,
                lock.ttl_ms,
                lock.op_timeout_ms,
                lock.retry_delay_ms,
            )))
        })
    }
}
