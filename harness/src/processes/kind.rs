//! The kinds of node process the supervisor can run, and what differs between them: binary,
//! Debian package, config file, command line and readiness probe ([`NodeRecipe`]). Process
//! lifecycle is the supervisor's, shared by all kinds. Adding a kind of node (an SQL server)
//! means a module like `redis.rs` whose options implement [`NodeRecipe`]; nothing here
//! changes.

use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::folder::NodeFolder;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// Interval between readiness probes; Redis is ready 15–30 ms after spawn here.
pub(crate) const PROBE_INTERVAL: Duration = Duration::from_millis(5);
/// Time one probe may take before it counts as "not yet".
pub(crate) const PROBE_TIMEOUT: Duration = Duration::from_millis(200);

/// A boxed future, so that [`NodeRecipe`] stays object-safe.
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What differs between kinds of node process: implemented by each kind's options.
pub(crate) trait NodeRecipe: fmt::Debug + Send + Sync + 'static {
    /// The server binary as configured (bare name or path).
    fn binary(&self) -> &Path;

    /// The Debian package that installs [`NodeRecipe::binary`].
    fn package(&self) -> &'static str;

    /// Rejects options that would produce a broken config, before anything is spawned.
    fn validate(&self) -> Result<(), String>;

    fn config_file(&self) -> &'static str;

    fn ready_timeout(&self) -> Duration;

    /// Writes the config for a server listening on `port`. Called before every start, so the
    /// file always matches the port in use.
    fn write_config(&self, folder: &NodeFolder, port: u16) -> io::Result<()>;

    /// The command line, without stdio (the supervisor sets it).
    fn command(&self, folder: &NodeFolder) -> Command;

    /// One readiness probe: true once the server serves clients.
    fn probe(&self, addr: SocketAddr) -> BoxFuture<'static, bool>;

    /// Whether a failed start failed because the port was taken, judged from what the server
    /// wrote to its logs during that start.
    fn address_in_use(&self, output: &str) -> bool;

    /// Whether the node at client address `addr`, working in `folder`, leads its cluster
    /// right now, by its own account (asked over the network, or read from its log); a single
    /// server is never a leader.
    fn is_leader(&self, addr: SocketAddr, folder: &NodeFolder) -> BoxFuture<'static, bool> {
        let _ = (addr, folder);
        Box::pin(async { false })
    }

    /// Makes the replica at client address `addr` a primary that takes writes (a failover);
    /// `Err` says why it could not, in words that read after "promote …: ".
    fn promote(&self, addr: SocketAddr) -> BoxFuture<'static, Result<(), String>> {
        let _ = addr;
        Box::pin(async { Err("this kind of node has no replica to promote".to_owned()) })
    }

    /// Runs once the server answered its readiness probe (each start): housekeeping that
    /// needs the running server, e.g. PostgreSQL's shared-memory clean-up.
    fn on_ready(&self, folder: &NodeFolder) {
        let _ = folder;
    }
}

/// One node's kind, with its options.
#[derive(Debug, Clone)]
pub struct NodeKind(Arc<dyn NodeRecipe>);

impl NodeKind {
    pub(crate) fn new(recipe: impl NodeRecipe) -> NodeKind {
        NodeKind(Arc::new(recipe))
    }

    /// The server binary as configured (bare name or path).
    pub fn binary(&self) -> &Path {
        self.0.binary()
    }

    /// The Debian package that installs [`NodeKind::binary`].
    pub fn package(&self) -> &'static str {
        self.0.package()
    }

    pub(crate) fn validate(&self) -> Result<(), String> {
        self.0.validate()
    }

    pub(crate) fn config_file(&self) -> &'static str {
        self.0.config_file()
    }

    pub(crate) fn ready_timeout(&self) -> Duration {
        self.0.ready_timeout()
    }

    pub(crate) fn write_config(&self, folder: &NodeFolder, port: u16) -> io::Result<()> {
        self.0.write_config(folder, port)
    }

    pub(crate) fn command(&self, folder: &NodeFolder) -> Command {
        self.0.command(folder)
    }

    pub(crate) async fn probe(&self, addr: SocketAddr) -> bool {
        self.0.probe(addr).await
    }

    pub(crate) fn address_in_use(&self, output: &str) -> bool {
        self.0.address_in_use(output)
    }

    pub(crate) async fn is_leader(&self, addr: SocketAddr, folder: &NodeFolder) -> bool {
        self.0.is_leader(addr, folder).await
    }

    pub(crate) async fn promote(&self, addr: SocketAddr) -> Result<(), String> {
        self.0.promote(addr).await
    }

    pub(crate) fn on_ready(&self, folder: &NodeFolder) {
        self.0.on_ready(folder)
    }
}
