//! What a lock implementation provides to the client loop.

use super::adapter_error::AdapterError;
use super::pause::PausePoints;
pub use crate::vocab::Outcome;
use lockpick_checker::history::Value;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// What a successful acquire hands the holder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// Fencing token, for locks that have one.
    pub token: Option<u64>,
    /// The value identifying this holder inside the lock.
    pub holder: String,
    /// Lease length, for locks that expire.
    pub lease_ms: Option<u64>,
    /// When the client sent the acquire that succeeded: the lease is counted from there, the
    /// earliest moment the server could have started it.
    pub sent_at: Instant,
    /// When the request the lock granted was sent, for a recipe where one request decides the
    /// grant (a `SET NX`, an `INSERT`): the lock cannot have granted before it, and a lease it
    /// set runs at least until then plus the lease. The history records it (`sent_ns`). `None`
    /// where the grant came of waiting (etcd, ZooKeeper: a predecessor went away) or from an
    /// adapter, whose library's requests lockpick does not see.
    pub request_sent: Option<Instant>,
    /// The value by which the lock's server knows this holder, when it is not `holder` and the
    /// library says it (an adapter's `owner`): the server record attributes it. `None` for
    /// lockpick's recipes, which store `holder` itself.
    pub owner: Option<String>,
}

/// A lock implementation: makes sessions, one per client process.
pub trait LockClient: Send + Sync + 'static {
    type Session: LockSession;

    /// Opens a fresh session (connections, server-side session) for a new process; `seed`
    /// seeds its random choices (retry delays). Errors are
    /// retried by the caller; nothing is recorded for them.
    fn connect(&self, seed: u64) -> impl Future<Output = Result<Self::Session, String>> + Send;

    /// Like [`LockClient::connect`], for a client whose pauses are announced on `points`.
    /// Locks whose client library keeps the session alive on its own (ZooKeeper pings)
    /// override it to stop that traffic while paused; the others just connect.
    fn connect_pausable(
        &self,
        seed: u64,
        points: Arc<PausePoints>,
    ) -> impl Future<Output = Result<Self::Session, String>> + Send {
        let _ = points;
        self.connect(seed)
    }

    /// Like [`LockClient::connect_pausable`], for a client that needs to know who connects
    /// (an adapter process is told its client and process ids). The others just connect.
    fn connect_as(
        &self,
        who: Connecting,
        points: Arc<PausePoints>,
    ) -> impl Future<Output = Result<Self::Session, String>> + Send {
        self.connect_pausable(who.seed, points)
    }

    /// Why the run must stop because a client broke the harness (an adapter process broke the
    /// client protocol, or cannot be started); taken, so it is reported once. The operation
    /// it broke ended `info` and its process was retired; the driver asks after every
    /// retirement and failed connect.
    fn broken(&self) -> Option<AdapterError> {
        None
    }

    /// Lease length asked for on acquire, if the lock has leases.
    fn lease_ms(&self) -> Option<u64>;
}

/// Who opens a session: the logical client, the process id it records under, the seed of
/// its random choices, and the run's folder (an adapter process writes its stderr there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connecting {
    pub client: usize,
    pub process: u64,
    pub seed: u64,
    pub run_dir: PathBuf,
}

/// One process's handle on the lock. Cloned for the renewal watchdog, which runs beside the
/// holder as a background thread does in a real client.
pub trait LockSession: Clone + Send + Sync + 'static {
    /// Takes the lock, waiting or retrying until `deadline`. `Fail` when it definitely was not
    /// taken by then.
    fn acquire(
        &mut self,
        holder: &str,
        deadline: Instant,
    ) -> impl Future<Output = Outcome<Grant>> + Send;

    /// Points the operations that follow (this acquire, its writes, renewals and release) at
    /// lock `index` of the run's [`LockSpec::names`](crate::vocab::LockSpec::names). Only
    /// called with `index > 0` on kinds whose
    /// [`ClientKind::many_locks`](super::kind::ClientKind::many_locks) is `Ok`; the others
    /// have the one lock they were built for.
    fn select_lock(&mut self, index: usize) {
        debug_assert_eq!(index, 0, "a single-lock session asked for lock {index}");
    }

    /// Gives the lock back. `Fail("not-owner")` when the lock was no longer this holder's.
    fn release(&mut self, grant: &Grant) -> impl Future<Output = Outcome<()>> + Send;

    /// Extends the lease. `Fail("lost")` when the lock is no longer this holder's.
    fn renew(&mut self, grant: &Grant) -> impl Future<Output = Outcome<()>> + Send;

    /// Whether a renewal still in flight may be dropped when the hold ends, so that the
    /// release is asked for when the holder decides to let go, not when a renewal stuck in a
    /// fault times out: a holder's belief ends at its release's invocation, and waiting for the
    /// renewal stretched it past the lease (etcd × partition: a keep-alive to the cut member,
    /// its 1.2 s timeout past the 1 s lease). True where a request is a future on a multiplexed
    /// connection (etcd's gRPC, ZooKeeper's client), so that dropping it leaves the session
    /// usable; false, the default, where a connection carries one request at a time and its
    /// answer must be read before the next (an adapter's pipes).
    fn renewal_may_be_dropped(&self) -> bool {
        false
    }

    /// Whether this recipe stops trusting the lock when its own count of the lease (from the
    /// grant's `sent_at`, then from each acknowledged renewal's send) runs out with no renewal
    /// acknowledged: the watchdog then records the renewal failed ("lease ran out by the
    /// client's count"), which ends the holder's belief. Only lockpick's own recipes that
    /// claim it (etcd's mutex counts its lease from its last acknowledged keep-alive); never a
    /// library behind an adapter, whose verdict must stay its own. Default false.
    fn stops_at_own_lease_count(&self) -> bool {
        false
    }

    /// Extra history fields about the last acquire (e.g. Redlock's per-node answers and
    /// validity), merged into its completion; taken, so a second call returns nothing.
    fn last_detail(&mut self) -> Value {
        Value::default()
    }

    /// What the lock's library told this process since `since` that a holder following its
    /// documentation must honour before using the lock (see [`Told`]). Only libraries behind an
    /// adapter send notices; the built-in recipes tell nothing.
    fn told_since(&self, since: Instant) -> Option<Told> {
        let _ = since;
        None
    }

    /// Resolves when the library sends this process a notice (or never, for a lock whose
    /// library sends none): a documented holder waiting out its hold wakes to honour it.
    fn notice_sent(&self) -> impl Future<Output = ()> + Send {
        std::future::pending()
    }
}

/// What a library told a holder that stops a documented use of the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Told {
    /// The lock is lost (a `lost` notice).
    Lost,
    /// The connection or session is in doubt (a `suspended` notice, with no `reconnected`
    /// after it): the holder cannot be sure it still holds the lock.
    Suspended,
}

impl Told {
    /// From the notices a process got, in order: `lost` anywhere wins; else the last of
    /// `suspended` and `reconnected` decides.
    pub fn from_notices<'a>(events: impl IntoIterator<Item = &'a str>) -> Option<Told> {
        let mut told = None;
        for e in events {
            match e {
                "lost" => return Some(Told::Lost),
                "suspended" => told = Some(Told::Suspended),
                "reconnected" => told = None,
                _ => {}
            }
        }
        told
    }
}

impl<T> Outcome<T> {
    /// Maps the value of an `Ok`, keeping `Fail` and `Info` as they are.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Outcome<U> {
        self.and_then(|v| Outcome::Ok(f(v)))
    }

    /// Decides the outcome from the value of an `Ok`, keeping `Fail` and `Info` as they are.
    pub fn and_then<U>(self, f: impl FnOnce(T) -> Outcome<U>) -> Outcome<U> {
        match self {
            Outcome::Ok(v) => f(v),
            Outcome::Fail(e) => Outcome::Fail(e),
            Outcome::Info(e) => Outcome::Info(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Told;

    #[test]
    fn a_loss_stands_and_a_suspension_lasts_until_a_reconnection() {
        assert_eq!(Told::from_notices([]), None);
        assert_eq!(Told::from_notices(["suspended"]), Some(Told::Suspended));
        assert_eq!(Told::from_notices(["suspended", "reconnected"]), None);
        assert_eq!(
            Told::from_notices(["reconnected", "suspended"]),
            Some(Told::Suspended)
        );
        assert_eq!(
            Told::from_notices(["lost", "reconnected"]),
            Some(Told::Lost),
            "a reconnection does not give a lost lock back"
        );
    }
}
