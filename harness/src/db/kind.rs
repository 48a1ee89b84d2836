//! The kinds of backend node the supervisor can run, and what differs between them: binary,
//! Debian package, config file, command line and readiness probe. Process lifecycle is the
//! supervisor's, shared by all kinds. Adding etcd, ZooKeeper, sentinel or an SQL server means
//! a new variant, a module like `redis.rs`, and an arm in each method here.

use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::etcd::{self, EtcdOptions};
use super::folder::NodeFolder;
use super::mariadb::{self, MariaDbOptions};
use super::postgres::{self, PgOptions};
use super::redis::{self, RedisOptions};
use super::sentinel::{self, SentinelOptions};
use super::zookeeper::{self, ZkOptions};

/// Interval between readiness probes; Redis is ready 15–30 ms after spawn here.
pub(crate) const PROBE_INTERVAL: Duration = Duration::from_millis(5);
/// Time one probe may take before it counts as "not yet".
const PROBE_TIMEOUT: Duration = Duration::from_millis(200);

/// One kind of node, with its options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeKind {
    Redis(RedisOptions),
    /// One member of an etcd cluster; started with its peers by `start_cluster`.
    Etcd(EtcdOptions),
    /// One server of a ZooKeeper ensemble; started with its peers by `start_cluster`.
    ZooKeeper(ZkOptions),
    Sentinel(SentinelOptions),
    /// A PostgreSQL server (initdb on first start).
    Postgres(PgOptions),
    /// A MariaDB server (InnoDB files made on first start).
    MariaDb(MariaDbOptions),
}

impl NodeKind {
    /// The server binary as configured (bare name or path).
    pub fn binary(&self) -> &Path {
        match self {
            NodeKind::Redis(opts) => &opts.binary,
            NodeKind::Etcd(opts) => &opts.binary,
            NodeKind::ZooKeeper(opts) => &opts.java,
            NodeKind::Sentinel(opts) => &opts.binary,
            NodeKind::Postgres(opts) => &opts.binary,
            NodeKind::MariaDb(opts) => &opts.binary,
        }
    }

    /// The Debian package that installs [`NodeKind::binary`].
    pub fn package(&self) -> &'static str {
        match self {
            NodeKind::Redis(_) => redis::PACKAGE,
            NodeKind::Etcd(_) => etcd::PACKAGE,
            NodeKind::ZooKeeper(_) => zookeeper::PACKAGE,
            NodeKind::Sentinel(_) => sentinel::PACKAGE,
            NodeKind::Postgres(_) => postgres::PACKAGE,
            NodeKind::MariaDb(_) => mariadb::PACKAGE,
        }
    }

    /// Rejects options that would produce a broken config, before anything is spawned.
    pub(crate) fn validate(&self) -> Result<(), String> {
        match self {
            NodeKind::Redis(opts) => opts.validate(),
            NodeKind::Etcd(opts) => opts.validate(),
            NodeKind::ZooKeeper(opts) => opts.validate(),
            NodeKind::Sentinel(opts) => opts.validate(),
            NodeKind::Postgres(opts) => opts.validate(),
            NodeKind::MariaDb(opts) => opts.validate(),
        }
    }

    pub(crate) fn config_file(&self) -> &'static str {
        match self {
            NodeKind::Redis(_) => redis::CONFIG_FILE,
            NodeKind::Etcd(_) => etcd::CONFIG_FILE,
            NodeKind::ZooKeeper(_) => zookeeper::CONFIG_FILE,
            NodeKind::Sentinel(_) => sentinel::CONFIG_FILE,
            NodeKind::Postgres(_) => postgres::CONFIG_FILE,
            NodeKind::MariaDb(_) => mariadb::CONFIG_FILE,
        }
    }

    pub(crate) fn ready_timeout(&self) -> Duration {
        match self {
            NodeKind::Redis(opts) => opts.ready_timeout,
            NodeKind::Etcd(opts) => opts.ready_timeout,
            NodeKind::ZooKeeper(opts) => opts.ready_timeout,
            NodeKind::Sentinel(opts) => opts.ready_timeout,
            NodeKind::Postgres(opts) => opts.ready_timeout,
            NodeKind::MariaDb(opts) => opts.ready_timeout,
        }
    }

    /// Writes the config for a server listening on `port`. Called before every start, so the
    /// file always matches the port in use.
    pub(crate) fn write_config(&self, folder: &NodeFolder, port: u16) -> io::Result<()> {
        match self {
            NodeKind::Redis(opts) => opts.write_config(folder, port),
            NodeKind::Etcd(opts) => opts.write_config(folder, port),
            NodeKind::ZooKeeper(opts) => opts.write_config(folder, port),
            NodeKind::Sentinel(opts) => opts.write_config(folder, port),
            NodeKind::Postgres(opts) => opts.write_config(folder, port),
            NodeKind::MariaDb(opts) => opts.write_config(folder, port),
        }
    }

    /// The command line, without stdio (the supervisor sets it).
    pub(crate) fn command(&self, folder: &NodeFolder) -> Command {
        match self {
            NodeKind::Redis(opts) => opts.command(folder),
            NodeKind::Etcd(opts) => opts.command(folder),
            NodeKind::ZooKeeper(opts) => opts.command(folder),
            NodeKind::Sentinel(opts) => opts.command(folder),
            NodeKind::Postgres(opts) => opts.command(folder),
            NodeKind::MariaDb(opts) => opts.command(folder),
        }
    }

    /// One readiness probe: true once the server serves clients.
    pub(crate) async fn probe(&self, addr: SocketAddr) -> bool {
        match self {
            NodeKind::Redis(_) | NodeKind::Sentinel(_) => {
                redis::redis_ping(addr, PROBE_TIMEOUT).await
            }
            NodeKind::Etcd(_) => etcd::etcd_health(addr, PROBE_TIMEOUT).await,
            NodeKind::ZooKeeper(_) => zookeeper::zk_serving(addr, PROBE_TIMEOUT).await,
            NodeKind::Postgres(_) => postgres::pg_ready(addr, PROBE_TIMEOUT).await,
            NodeKind::MariaDb(_) => mariadb::mariadb_ready(addr, PROBE_TIMEOUT).await,
        }
    }

    /// Whether a failed start failed because the port was taken, judged from what the server
    /// wrote to its logs during that start.
    pub(crate) fn address_in_use(&self, output: &str) -> bool {
        match self {
            NodeKind::Redis(_) | NodeKind::Sentinel(_) => redis::address_in_use(output),
            NodeKind::Etcd(_) => etcd::address_in_use(output),
            NodeKind::ZooKeeper(_) => zookeeper::address_in_use(output),
            NodeKind::Postgres(_) => postgres::address_in_use(output),
            NodeKind::MariaDb(_) => mariadb::address_in_use(output),
        }
    }

    /// Whether the node at client address `addr` leads its cluster right now; a single
    /// server (Redis, Sentinel) is never a leader.
    pub(crate) async fn is_leader(&self, addr: SocketAddr) -> bool {
        match self {
            NodeKind::Redis(_)
            | NodeKind::Sentinel(_)
            | NodeKind::Postgres(_)
            | NodeKind::MariaDb(_) => false,
            NodeKind::Etcd(_) => etcd::etcd_is_leader(addr, PROBE_TIMEOUT).await,
            NodeKind::ZooKeeper(_) => zookeeper::zk_is_leader(addr, PROBE_TIMEOUT).await,
        }
    }

    /// Runs once the server answered its readiness probe (each start): kind-specific
    /// housekeeping that needs the running server, e.g. PostgreSQL's shared-memory clean-up.
    pub(crate) fn on_ready(&self, folder: &NodeFolder) {
        match self {
            NodeKind::Redis(_)
            | NodeKind::Etcd(_)
            | NodeKind::ZooKeeper(_)
            | NodeKind::Sentinel(_) => {}
            NodeKind::Postgres(opts) => opts.on_ready(folder),
            NodeKind::MariaDb(_) => {}
        }
    }
}
