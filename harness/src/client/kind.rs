//! Client kinds: what a scenario's `[client]` table names, apart from the servers it runs on
//! (`[server]`, see [`crate::server`] for the whole design).
//!
//! A client kind says which server kinds it runs on, may narrow their node rule, reads its own
//! options from the `[client]` table (a struct with `deny_unknown_fields`, so a misspelt key is
//! an error naming file, line and field), and builds the clients the driver runs from the
//! started server's [`Endpoints`]. [`LockClient`] is not object-safe (`impl Future`, an
//! associated session type), so the registry holds the small object-safe [`Clients`], which
//! every `Arc<L: LockClient>` is. Adding a client kind is one module implementing
//! [`ClientKind`] and one line in its backend's entry in [`crate::backends::BACKENDS`].

use super::driver::{run_client, ClientCtx};
use super::lock::LockClient;
use crate::server::{Endpoints, NodeRule, ServerKind};
use crate::vocab::{ClientTable, Discipline, LockSpec, ScenarioError};
use serde::Deserialize;
use std::fmt;
use std::path::Path;
use std::sync::Arc;
use tokio::task::JoinSet;

/// The server kinds a client kind runs on.
#[derive(Debug, Clone, Copy)]
pub enum Runs {
    /// Any server kind: the client needs nothing but the node addresses (e.g. a client
    /// process speaking to whatever the nodes are).
    Any,
    /// Only these, by name.
    On(&'static [&'static str]),
}

impl Runs {
    /// Whether a client of this kind runs on `server`.
    pub fn allows(self, server: &dyn ServerKind) -> bool {
        match self {
            Runs::Any => true,
            Runs::On(names) => names.contains(&server.name()),
        }
    }

    /// For "allowed:" lists.
    pub fn describe(self) -> String {
        match self {
            Runs::Any => "any server".to_owned(),
            Runs::On(names) => names.join(", "),
        }
    }
}

/// One kind of client: which servers it runs on and how its `[client]` options read.
pub trait ClientKind: Sync + 'static {
    /// The name in `[client] kind = …`.
    fn name(&self) -> &'static str;

    /// One line on the recipe and its fencing token, for listings and docs/scenarios.md.
    fn about(&self) -> &'static str;

    fn runs_on(&self) -> Runs;

    /// The node counts this client uses, within the server's (single-instance locks: one;
    /// Redlock: five masters by default). `None`: whatever the server allows.
    fn nodes(&self) -> Option<NodeRule> {
        None
    }

    /// About how long starting its clients adds to a run, in milliseconds, beyond the
    /// servers' start ([`crate::server::ServerKind::start_cost_ms`]): what a matrix or suite
    /// shard expects a run of it to cost. Built-in clients start in no time that counts.
    fn start_cost_ms(&self) -> u64 {
        0
    }

    /// Whether its sessions can act on any of a run's `[workload] locks`, picked per
    /// operation ([`LockSession::select_lock`](super::lock::LockSession::select_lock)); `Err`
    /// says why not, and a scenario with `locks > 1` on this kind is refused with it. Most
    /// kinds name their one lock when they are built.
    fn many_locks(&self) -> Result<(), &'static str> {
        Err("its clients are built for one lock name")
    }

    /// How its clients use a granted lock when the scenario does not say
    /// (`[client] discipline`): the built-in recipes check their lease first (careful), as
    /// the scenarios about a pause after that check expect.
    fn default_discipline(&self) -> Discipline {
        Discipline::Careful
    }

    /// Whether its clients can follow a library's documentation (`discipline = "documented"`):
    /// only an adapter, whose library declares what it gives its users.
    fn takes_documented(&self) -> bool {
        false
    }

    /// Whether its clients can be stopped inside a request (`client-pause` at `during-op`):
    /// only an adapter process, whose requests lockpick sends and whose replies it reads.
    fn stops_inside_requests(&self) -> bool {
        false
    }

    /// From when the `lease_ms` of its grants counts: the built-in recipes record the TTL
    /// they asked for, counted from the request that won; an adapter reports the lease its
    /// library believes it holds, counted from its reply (docs/history-format.md).
    fn lease_counted_from(&self) -> LeaseFrom {
        LeaseFrom::Request
    }

    /// Reads and checks its options from the scenario's `[client]` table (the defaults when
    /// the scenario has none, as with the `[backend]` shorthand or a `--backend` lock).
    fn options(&self, table: &ClientTable<'_>) -> Result<Arc<dyn ClientOptions>, ScenarioError>;

    /// Makes the relative paths among its `[client]` options (as written in a file in
    /// `folder`) absolute, so a scenario generated from them elsewhere (a matrix cell's, in the
    /// store) runs the same program. Only kinds that take paths have any.
    fn rebase_paths(&self, _options: &mut toml::Table, _folder: &Path) {}
}

/// From when a grant's recorded `lease_ms` counts ([`ClientKind::lease_counted_from`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseFrom {
    /// The request that won (the built-in recipes): the lease is the TTL the lock was asked for.
    Request,
    /// The reply (an adapter): the lease the library says it holds as it answers.
    Reply,
}

impl fmt::Debug for dyn ClientKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialEq for dyn ClientKind {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

/// What building the clients of one run may use.
pub struct BuildCtx<'a> {
    /// The `[lock]` parameters every client kind takes.
    pub lock: &'a LockSpec,
    /// What the started servers give their clients (node proxies, sentinels).
    pub endpoints: &'a Endpoints,
    /// The run's store folder, for anything a client keeps (a client process's stderr).
    pub run_dir: &'a Path,
}

/// A client kind's options, read and checked: makes the clients of one run.
pub trait ClientOptions: fmt::Debug + Send + Sync {
    /// The clients of one run. The error reads after "failed to build the <kind> clients: ".
    fn build(&self, ctx: &BuildCtx<'_>) -> Result<Box<dyn Clients>, String>;

    /// What the reader could not check and the user should know before the run (e.g. an
    /// adapter's options passed unchecked), one sentence each.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }

    /// Checks against this machine (an adapter's program, files and declared options) made
    /// when a scenario is loaded to run, not when a stored copy is read back by `check`,
    /// whose relative paths no longer lead anywhere.
    fn preflight(&self) -> Result<(), ScenarioError> {
        Ok(())
    }
}

/// Starts client loops: the object-safe face of a [`LockClient`].
pub trait Clients: Send + Sync {
    /// Spawns `clients` client loops on `tasks`, client `i` with `ctx(i)`.
    fn spawn(&self, tasks: &mut JoinSet<()>, clients: usize, ctx: &dyn Fn(usize) -> ClientCtx);
}

impl<L: LockClient> Clients for Arc<L> {
    fn spawn(&self, tasks: &mut JoinSet<()>, clients: usize, ctx: &dyn Fn(usize) -> ClientCtx) {
        for index in 0..clients {
            tasks.spawn(run_client(self.clone(), ctx(index)));
        }
    }
}

/// The `[client]` table of a kind without options of its own: only `kind`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoOptions {
    #[serde(default)]
    pub kind: serde::de::IgnoredAny,
    /// Read by the scenario loader ([`crate::vocab::Discipline`]).
    #[serde(default)]
    pub discipline: serde::de::IgnoredAny,
}

/// Options of a kind that has none: the clients are made from the lock and the endpoints alone.
#[derive(Debug)]
pub struct Plain(pub fn(&LockSpec, &Endpoints) -> Box<dyn Clients>);

impl Plain {
    /// Reads a `[client]` table that may only say `kind`, for a kind built by `build`.
    pub fn read(
        table: &ClientTable<'_>,
        build: fn(&LockSpec, &Endpoints) -> Box<dyn Clients>,
    ) -> Result<Arc<dyn ClientOptions>, ScenarioError> {
        table.read::<NoOptions>()?;
        Ok(Arc::new(Plain(build)))
    }
}

impl ClientOptions for Plain {
    fn build(&self, ctx: &BuildCtx<'_>) -> Result<Box<dyn Clients>, String> {
        Ok((self.0)(ctx.lock, ctx.endpoints))
    }
}

/// The node rule of a client that uses the first node only: more would be ignored, so they
/// are refused.
pub const SINGLE_NODE: NodeRule = NodeRule {
    default: 1,
    min: 1,
    max: 1,
    odd: false,
};
