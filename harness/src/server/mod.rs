//! Server kinds: what a scenario's `[server]` table names, apart from the client that takes the
//! lock on it (`[client]`, see [`crate::client::ClientKind`]).
//!
//! # Design
//!
//! As Jepsen keeps `db`, `client` and `nemesis` apart, lockpick keeps three registries:
//!
//! - a **server kind** ([`ServerKind`], this module) knows how many nodes it runs, which faults
//!   its nodes can take ([`Capabilities`]: optional capabilities instead of one enum matched
//!   everywhere), which lock parameters it cannot honour, and how to start its nodes behind
//!   the proxies. What it hands back is [`Endpoints`]: the client address of every node (its
//!   proxy) and, for kinds that run a discovery service, that service's addresses;
//! - a **client kind** ([`crate::client::ClientKind`]) knows which server kinds it runs on, how
//!   its own `[client]` options read, and builds the clients the driver runs from the
//!   endpoints;
//! - a **lock** ([`crate::locks::LockPreset`]) is a named pair of the two with default options
//!   (`redis`, `redlock`, `etcd`, …): what `--backend`, `compare --backends` and the old
//!   `[backend] kind = …` shorthand name.
//!
//! Adding a server kind is one module in its backend's folder (`crate::backends::<name>/`)
//! implementing [`ServerKind`], listed in that backend's entry of the registry. Nothing matches on server kinds: a capability a new kind lacks is a field of
//! [`Capabilities`] it must fill, so the compiler points at every decision.

mod error;
pub mod record;
mod shapes;
mod version;

use crate::cluster::ClusterNet;
use crate::processes::Supervisor;
use crate::proxy::FaultProxies;

use crate::vocab::{LockSpec, Persistence};
use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use tokio::sync::Mutex;

pub use error::StartError;
pub use shapes::{start_all, started_cluster, CLUSTER_NODES, SINGLE_SERVER};
pub use version::{Install, NotInstalled, ServerVersion};

/// Whether a server kind supports something; `Err` says why not.
pub type Support = Result<(), Cannot>;

/// Why a server kind cannot take something, in words that read after "cannot …: ", and
/// whether the lock itself could never meet it or only lockpick cannot bring it here: a
/// matrix says `n/a` for the first and `not injectable here` for the second, never that a
/// lock is immune to what only this machine cannot do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cannot {
    /// The lock cannot meet it at all (a single server has no replica to fail over to).
    Never(&'static str),
    /// The lock could meet it in production, but lockpick cannot bring it to these servers on
    /// this machine (libfaketime does not reach a Go binary's clock).
    NotHere(&'static str),
}

impl Cannot {
    /// The reason, in words.
    pub fn why(self) -> &'static str {
        match self {
            Cannot::Never(why) | Cannot::NotHere(why) => why,
        }
    }

    /// Whether only lockpick, here, cannot do it.
    pub fn not_here(self) -> bool {
        match self {
            Cannot::Never(_) => false,
            Cannot::NotHere(_) => true,
        }
    }
}

impl std::fmt::Display for Cannot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.why())
    }
}

/// What the nodes of a server kind can take. Every field must be decided by every kind.
#[derive(Debug, Clone, Copy)]
pub struct Capabilities {
    /// Its node processes can be stopped (SIGSTOP) and killed and restarted.
    pub signals: Support,
    /// Its nodes run under libfaketime, so their clocks can jump, drift and strobe.
    pub clock: Support,
    /// It is a consensus cluster whose members talk through lockpick's peer proxies: members can
    /// be isolated from each other, and faults may target the leader.
    pub peers: Support,
    /// It can be tested on servers lockpick did not start (`--external`), given only the
    /// client address of each node.
    pub external: Support,
    /// It runs a primary `n1` and a replica `n2` that can be promoted, clients reaching the
    /// primary through the proxy `n1` (which a failover points at the promoted replica).
    pub failover: Support,
}

/// How many nodes a server kind (or a client kind on it) allows, and how many it runs when the
/// scenario does not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeRule {
    pub default: usize,
    pub min: usize,
    pub max: usize,
    /// Only odd counts, so that every split has a majority side.
    pub odd: bool,
}

impl NodeRule {
    /// The counts both rules allow; the default is `other`'s when it fits, so a client kind
    /// (Redlock: five masters) can choose its own.
    pub fn narrowed_by(self, other: NodeRule) -> NodeRule {
        let min = self.min.max(other.min);
        let max = self.max.min(other.max);
        let default = if (min..=max).contains(&other.default) {
            other.default
        } else {
            self.default.clamp(min, max)
        };
        NodeRule {
            default,
            min,
            max,
            odd: self.odd || other.odd,
        }
    }

    /// Whether `n` nodes are allowed.
    pub fn allows(self, n: usize) -> bool {
        (self.min..=self.max).contains(&n) && (!self.odd || n % 2 == 1)
    }
}

/// A lock parameter a server kind cannot honour: the `[lock]` field and why, with what is
/// allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// As the scenario file writes it, e.g. `lock.ttl_ms`.
    pub field: &'static str,
    pub message: String,
}

/// What a started server gives its clients: the address of every node (its proxy), and of any
/// discovery service it runs.
#[derive(Debug, Clone, Default)]
pub struct Endpoints {
    /// `(node name, address)` in node order (`n1`, `n2`, …): the proxies in front of the nodes.
    pub nodes: Vec<(String, SocketAddr)>,
    /// The sentinels of a `redis-sentinel` server, which name the current master; `None` for
    /// other kinds.
    pub sentinels: Option<Sentinels>,
    /// `(node name, address)` where lockpick administers each node itself, straight (no proxy,
    /// no fault): Hazelcast's REST port, through which its [`Reset`] works. Empty for kinds
    /// administered through their client port.
    pub admin: Vec<(String, SocketAddr)>,
}

/// A discovery service of Redis Sentinel: where its sentinels listen (reached directly), and the
/// name under which they know the master (`SENTINEL get-master-addr-by-name <master>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sentinels {
    pub master: String,
    /// Never empty.
    pub addrs: Vec<SocketAddr>,
    /// Each node's address as the sentinels name it, with the proxy in front of it, in node
    /// order: a NAT map. The named address is a router that passes a client through that same
    /// proxy, after finding in /proc that the dialer is no cluster member (quick for lockpick's
    /// own clients, 0.1-2 s a connection for an adapter's on a loaded machine).
    pub nat: Vec<(SocketAddr, SocketAddr)>,
}

impl Endpoints {
    /// The node addresses alone, in node order.
    pub fn addrs(&self) -> Vec<SocketAddr> {
        self.nodes.iter().map(|(_, a)| *a).collect()
    }
}

/// A started server: what its clients reach, and its peer network if it has one.
pub struct Started {
    pub endpoints: Endpoints,
    pub cluster: Option<Arc<ClusterNet>>,
}

/// What starting a server needs.
pub struct StartCtx<'a> {
    pub supervisor: &'a Mutex<Supervisor>,
    pub proxies: &'a FaultProxies,
    /// Node names, `n1` … `nN`.
    pub nodes: Vec<String>,
    pub persistence: Persistence,
    /// The scenario moves clocks: start the nodes under libfaketime.
    pub faketime: bool,
    /// The release to run (`[server] version`), one of [`ServerKind::versions`]; `None` for a
    /// kind that has no list.
    pub version: Option<&'static ServerVersion>,
}

/// A boxed future, so that [`ServerKind`] stays object-safe.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One kind of server a scenario can run: its node rule, what its nodes can take, which lock
/// parameters it honours, and how it starts behind the proxies.
pub trait ServerKind: Sync + 'static {
    /// The name in `[server] kind = …`.
    fn name(&self) -> &'static str;

    /// One line on what runs, for listings and docs/scenarios.md.
    fn about(&self) -> &'static str;

    fn nodes(&self) -> NodeRule;

    /// About how long starting and stopping its nodes takes on top of a run's workload, in
    /// milliseconds: what a matrix shard's run is expected to cost beyond its workload
    /// ([`crate::matrix::assign`]). An estimate: the median of wall time minus workload over a
    /// `lockpick suite --seeds 3` on the project's 2 cores (shared with other builds, so high;
    /// what matters for balancing shards is how the kinds compare).
    fn start_cost_ms(&self) -> u64;

    fn capabilities(&self) -> Capabilities;

    /// Whether its nodes can keep what they acknowledged across a crash
    /// (`persistence = "aof-always"`).
    fn persistence(&self) -> Support;

    /// The nodes of `nodes` whose grants make a lock on it, and how many of them a holder must
    /// reach to keep it: what exposure's cut rule measures a cut against (docs/exposure.md).
    /// Every node and a majority by default (one node of one; Redlock, etcd, ZooKeeper). A
    /// majority where a library needs all (Redisson's MultiLock) under-counts the cuts that
    /// silence its holder: such a run is called not exposed, never exposed wrongly.
    fn granting(&self, nodes: &[String]) -> (Vec<String>, usize) {
        (nodes.to_vec(), nodes.len() / 2 + 1)
    }

    /// Whether a client waiting for a lock on it already holds something a session keeps
    /// (etcd's leased key in the wait queue, ZooKeeper's ephemeral node, Hazelcast's CP
    /// session): a cut past the lease can end it while the client waits (etcd #11456), which
    /// exposure's cut rule then counts (docs/exposure.md). A client that only retries a
    /// set-if-absent (Redis, SQL rows) holds nothing while it waits.
    fn waiters_keep_a_session(&self) -> bool {
        false
    }

    /// Processes besides the nodes that reach the nodes through link proxies of their own, by
    /// name (redis-sentinel: its sentinels `s1`…): a fault may name their links
    /// (`links = ["s1-to-n1"]`).
    fn dialers(&self) -> &'static [&'static str] {
        &[]
    }

    /// The releases `[server] version = …` may pick, the default (the one Debian ships)
    /// first; empty for a kind that runs whatever its Debian package installed and takes no
    /// `version`.
    fn versions(&self) -> &'static [ServerVersion] {
        &[]
    }

    /// The version of the server at client address `addr` as the server itself reports it
    /// (`3.6.16`), for the run's record; `None` when it cannot say.
    fn running_version(&self, addr: SocketAddr) -> BoxFuture<'static, Option<String>> {
        let _ = addr;
        Box::pin(async { None })
    }

    /// Rejects lock parameters this server cannot honour (etcd: leases in whole seconds).
    fn check_lock(&self, lock: &LockSpec) -> Result<(), FieldError> {
        let _ = lock;
        Ok(())
    }

    /// Starts the nodes under the supervisor, each behind a proxy named after it, and returns
    /// what clients reach. Precondition: none of these nodes or proxies exists yet.
    fn start<'a>(&'a self, ctx: StartCtx<'a>) -> BoxFuture<'a, Result<Started, StartError>>;

    /// How its running nodes are put back as a fresh start leaves them, so consecutive runs
    /// can share one start ([`Reset`], in the backend's folder); `None`: every run starts its
    /// own nodes. Every kind decides.
    fn reset(&self) -> Option<&'static dyn Reset>;

    /// How a run watches its nodes for what happens to the lock's records, writing the
    /// server's own record beside the history ([`Watch`], in the backend's folder); `None`:
    /// its runs have no server record. Every kind decides.
    fn watch(&self) -> Option<&'static dyn Watch>;
}

/// What a watcher of a run's nodes is given.
pub struct WatchCtx {
    /// `(node name, address)` of every node whose records make the lock (every master), in
    /// node order: the node's own address, not its proxy, so that the faults the run injects
    /// do not cut the observer off what it observes.
    pub nodes: Vec<(String, SocketAddr)>,
    /// What the nodes keep across a crash: a node restarted without it lost every record.
    pub persistence: Persistence,
    /// Where the changes go.
    pub log: Arc<record::ServerLog>,
    /// The sentinels of a `redis-sentinel` server, which say which node is the master.
    pub sentinels: Option<Sentinels>,
}

/// Watches the nodes of a server kind during a run and writes what happens to the lock's
/// records to the run's server record (`server.jsonl`): setup before the workload (after a
/// reset of reused servers, so an earlier run's keys are gone), use while it runs, teardown at
/// its end ([`Watching::finish`]).
pub trait Watch: Sync {
    /// Starts watching: returns once every node is watched (a change made after it is seen),
    /// or says which node could not be.
    fn start(&self, ctx: WatchCtx) -> BoxFuture<'static, Result<Watching, String>>;
}

/// A watch under way: the tasks that watch the nodes, and how to stop them.
pub struct Watching {
    pub stop: tokio_util::sync::CancellationToken,
    pub tasks: tokio::task::JoinSet<()>,
}

impl Watching {
    /// Stops the watchers, each after it caught up with what its node published so far (up
    /// to `limit`: a node that cannot answer is left).
    pub async fn finish(mut self, limit: std::time::Duration) {
        self.stop.cancel();
        let _ = tokio::time::timeout(limit, async {
            while self.tasks.join_next().await.is_some() {}
        })
        .await;
        self.tasks.abort_all();
    }
}

/// Puts running nodes of a server kind back in the state a fresh start leaves them in, as far
/// as a lock can tell: every key, row, znode, lease and session of earlier runs gone, the
/// fencing-token counter back at its start (or, where the server cannot reset it, only ever
/// growing: see the kind's implementation). Called between runs with every proxy healed and
/// every fault of the earlier run healed, so it talks to the nodes through their proxies.
pub trait Reset: Sync {
    /// Resets the nodes at `endpoints` (their proxies), within `limit`. `Err` says what
    /// failed: the caller then stops the nodes and starts fresh ones.
    fn reset<'a>(
        &'a self,
        endpoints: &'a Endpoints,
        limit: std::time::Duration,
    ) -> BoxFuture<'a, Result<(), String>>;

    /// How this kind's members are waited for after a fault that may have left some behind
    /// ([`crate::fault::AfterRun::Settle`]: a member stopped, cut off, or killed and
    /// restarted); `None`: this kind cannot tell that they settled, and its servers start
    /// afresh after such a fault. Every kind decides.
    fn settle(&self) -> Option<&'static dyn Settle>;
}

/// Waiting until a kind's members agree again, before the reset of servers whose last run
/// stopped, cut off or restarted some of them ([`Reset::settle`]).
pub trait Settle: Sync {
    /// Returns once the members at `endpoints` (their healed proxies) agree: one leader every
    /// member names, every member caught up with it. `Err` says what was still apart at
    /// `limit`; the caller then stops the nodes and starts fresh ones.
    fn settle<'a>(
        &'a self,
        endpoints: &'a Endpoints,
        limit: std::time::Duration,
    ) -> BoxFuture<'a, Result<(), String>>;
}

/// How often [`until_agreed`] asks the members while they do not agree yet.
pub const SETTLE_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// A [`Settle`]'s loop: asks `ask` (all the members, `Ok` when they agree, else what was
/// apart) every [`SETTLE_POLL`] until they agree or `limit` has passed.
pub async fn until_agreed<F, Fut>(limit: std::time::Duration, mut ask: F) -> Result<(), String>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let deadline = std::time::Instant::now() + limit;
    loop {
        let apart = match ask().await {
            Ok(()) => return Ok(()),
            Err(apart) => apart,
        };
        if std::time::Instant::now() >= deadline {
            return Err(format!("members still apart after {limit:?}: {apart}"));
        }
        tokio::time::sleep(SETTLE_POLL).await;
    }
}

/// The [`Settle`] of a kind whose nodes share nothing (independent Redis nodes, one SQL
/// server): there is no one to agree with, and the reset itself reaches every node.
pub struct NothingToSettle;

impl Settle for NothingToSettle {
    fn settle<'a>(
        &'a self,
        _: &'a Endpoints,
        _: std::time::Duration,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async { Ok(()) })
    }
}

impl fmt::Debug for dyn ServerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialEq for dyn ServerKind {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

/// Puts a proxy named after each node in front of the servers at `addrs` (one per node, in
/// order): how `--external` servers, which lockpick does not start, are reached.
pub async fn external(
    proxies: &FaultProxies,
    nodes: &[String],
    addrs: &[SocketAddr],
) -> Result<Started, StartError> {
    let mut endpoints = Endpoints::default();
    for (node, addr) in nodes.iter().zip(addrs) {
        endpoints
            .nodes
            .push((node.clone(), proxies.create(node, *addr).await?));
    }
    Ok(Started {
        endpoints,
        cluster: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_rule_narrows_the_server_rule_and_picks_its_default() {
        let redis = NodeRule {
            default: 1,
            min: 1,
            max: 15,
            odd: false,
        };
        let redlock = NodeRule {
            default: 5,
            min: 1,
            max: usize::MAX,
            odd: false,
        };
        let single = NodeRule {
            default: 1,
            min: 1,
            max: 1,
            odd: false,
        };
        assert_eq!(redis.narrowed_by(redlock).default, 5);
        assert_eq!(redis.narrowed_by(redlock).max, 15);
        assert_eq!(redis.narrowed_by(single).max, 1);
        let cluster = NodeRule {
            default: 3,
            min: 1,
            max: 7,
            odd: true,
        };
        assert!(!cluster.allows(2));
        assert!(cluster.allows(5));
    }
}
