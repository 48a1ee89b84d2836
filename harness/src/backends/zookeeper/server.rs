//! `zookeeper`: a ZooKeeper ensemble (3 servers by default, tick [`super::ZK_TICK_MS`]) whose peer
//! links run through lockpick's proxies. The lock's TTL is its session timeout, which the
//! servers allow between 2 and 20 ticks.

use super::process::{DEBIAN_CLASS_PATH, PACKAGE, ZK_TICK_MS};
use crate::backends::zookeeper::{start_zk_cluster_of, zk_version};
use crate::server::{
    BoxFuture, Cannot, Capabilities, FieldError, Install, NodeRule, ServerKind, ServerVersion,
    StartCtx, Started, Support,
};
use crate::server::{NotInstalled, StartError};
use crate::vocab::LockSpec;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

pub(super) struct ZooKeeper;

/// Debian's ZooKeeper (3.8.0 on bookworm), and ZooKeeper 3.9 from Maven Central: the jars
/// `scripts/setup` copies into `servers/zookeeper-3.9/target/lib` (exact versions in its pom).
static VERSIONS: &[ServerVersion] = &[
    ServerVersion {
        name: "3.8",
        install: Install::Debian { package: PACKAGE },
    },
    ServerVersion {
        name: "3.9",
        install: Install::Setup {
            path: "servers/zookeeper-3.9/target/lib",
        },
    },
];

/// The servers' class path for `version`: Debian's jars, or every jar setup fetched.
fn class_path(version: Option<&'static ServerVersion>) -> Result<String, NotInstalled> {
    match version
        .map(|v| v.setup_path("zookeeper"))
        .transpose()?
        .flatten()
    {
        None => Ok(DEBIAN_CLASS_PATH.to_owned()),
        Some(dir) => Ok(jars_in(&dir).join(":")),
    }
}

/// The jars in `dir`, sorted so that the class path is the same on every machine.
fn jars_in(dir: &Path) -> Vec<String> {
    let mut jars: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jar"))
        .filter_map(|p| p.to_str().map(str::to_owned))
        .collect();
    jars.sort();
    jars
}

/// The session timeouts ZooKeeper servers with lockpick's tick allow.
const MIN_SESSION_MS: u64 = 2 * ZK_TICK_MS;
const MAX_SESSION_MS: u64 = 20 * ZK_TICK_MS;

impl ServerKind for ZooKeeper {
    fn waiters_keep_a_session(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "zookeeper"
    }

    fn about(&self) -> &'static str {
        "a ZooKeeper (Zab) ensemble, peer links through proxies"
    }

    fn nodes(&self) -> NodeRule {
        crate::server::CLUSTER_NODES
    }

    fn start_cost_ms(&self) -> u64 {
        4600
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            signals: Ok(()),
            clock: Err(Cannot::NotHere("its servers do not run under libfaketime")),
            peers: Ok(()),
            external: Ok(()),
            failover: Err(Cannot::Never(
                "its members are a consensus cluster: it elects a new leader by itself",
            )),
        }
    }

    fn versions(&self) -> &'static [ServerVersion] {
        VERSIONS
    }

    fn running_version(&self, addr: SocketAddr) -> BoxFuture<'static, Option<String>> {
        Box::pin(zk_version(addr, Duration::from_secs(2)))
    }

    fn persistence(&self) -> Support {
        Err(Cannot::Never(
            "ZooKeeper always syncs its log to disk; only redis nodes take `persistence`",
        ))
    }

    fn check_lock(&self, lock: &LockSpec) -> Result<(), FieldError> {
        if !(MIN_SESSION_MS..=MAX_SESSION_MS).contains(&lock.ttl_ms) {
            return Err(FieldError {
                field: "lock.ttl_ms",
                message: format!(
                    "{} cannot be a ZooKeeper session timeout (2 to 20 ticks of {ZK_TICK_MS} ms); allowed: {MIN_SESSION_MS} to {MAX_SESSION_MS}",
                    lock.ttl_ms
                ),
            });
        }
        Ok(())
    }

    fn start<'a>(&'a self, ctx: StartCtx<'a>) -> BoxFuture<'a, Result<Started, StartError>> {
        Box::pin(async move {
            let class_path = class_path(ctx.version)?;
            let (sup, proxies) = (ctx.supervisor, ctx.proxies);
            let cluster =
                start_zk_cluster_of(sup, proxies, &ctx.nodes, ZK_TICK_MS, &class_path).await?;
            Ok(crate::server::started_cluster(&ctx.nodes, cluster))
        })
    }

    /// Every znode but `/zookeeper` deleted.
    fn reset(&self) -> Option<&'static dyn crate::server::Reset> {
        Some(&super::reset::ZkReset)
    }

    /// A persistent recursive watch through a session on each member, the ephemeral znodes
    /// written under one node name.
    fn watch(&self) -> Option<&'static dyn crate::server::Watch> {
        Some(&super::watch::ZkWatch)
    }
}
