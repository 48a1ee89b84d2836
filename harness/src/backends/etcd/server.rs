//! `etcd`: an etcd cluster (3 members by default) whose peer links run through lockpick's
//! proxies, so members can be isolated and the leader targeted.

use super::process::PACKAGE;
use crate::backends::etcd::{etcd_version, start_etcd_cluster_of};
use crate::server::{
    BoxFuture, Cannot, Capabilities, FieldError, Install, NodeRule, ServerKind, ServerVersion,
    StartCtx, Started, Support,
};
use crate::server::{NotInstalled, StartError};
use crate::vocab::LockSpec;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

pub(super) struct Etcd;

/// Debian's etcd (3.4.23 on bookworm), and etcd 3.6 built by `scripts/setup` from
/// `servers/etcd-3.6` (etcd's own `etcdmain` at the version its go.mod pins).
static VERSIONS: &[ServerVersion] = &[
    ServerVersion {
        name: "3.4",
        install: Install::Debian { package: PACKAGE },
    },
    ServerVersion {
        name: "3.6",
        install: Install::Setup {
            path: "servers/etcd-3.6/bin/etcd",
        },
    },
];

/// The members' binary for `version`: Debian's `etcd` in `PATH`, or the one setup built.
fn binary(version: Option<&'static ServerVersion>) -> Result<PathBuf, NotInstalled> {
    let built = version.map(|v| v.setup_path("etcd")).transpose()?.flatten();
    Ok(built.unwrap_or_else(|| PathBuf::from("etcd")))
}

impl ServerKind for Etcd {
    fn waiters_keep_a_session(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "etcd"
    }

    fn about(&self) -> &'static str {
        "an etcd (Raft) cluster, peer links through proxies"
    }

    fn nodes(&self) -> NodeRule {
        crate::server::CLUSTER_NODES
    }

    fn start_cost_ms(&self) -> u64 {
        3200
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            signals: Ok(()),
            // libfaketime works by preloading into libc's time calls; Go reads the clock
            // through vDSO/raw syscalls and is statically linked against its own runtime.
            clock: Err(Cannot::NotHere(
                "etcd is a Go binary, which ignores libfaketime: its clock cannot be skewed",
            )),
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
        Box::pin(etcd_version(addr, Duration::from_secs(2)))
    }

    fn persistence(&self) -> Support {
        Err(Cannot::Never(
            "etcd always syncs its log to disk; only redis nodes take `persistence`",
        ))
    }

    fn check_lock(&self, lock: &LockSpec) -> Result<(), FieldError> {
        if lock.ttl_ms % 1000 != 0 {
            return Err(FieldError {
                field: "lock.ttl_ms",
                message: format!(
                    "{} is not whole seconds; etcd leases have a TTL in seconds: allowed: 1000, 2000, …",
                    lock.ttl_ms
                ),
            });
        }
        Ok(())
    }

    fn start<'a>(&'a self, ctx: StartCtx<'a>) -> BoxFuture<'a, Result<Started, StartError>> {
        Box::pin(async move {
            let binary = binary(ctx.version)?;
            let cluster =
                start_etcd_cluster_of(ctx.supervisor, ctx.proxies, &ctx.nodes, &binary).await?;
            Ok(crate::server::started_cluster(&ctx.nodes, cluster))
        })
    }

    /// Every key deleted and every lease revoked (the revision keeps growing: see `reset.rs`).
    fn reset(&self) -> Option<&'static dyn crate::server::Reset> {
        Some(&super::reset::EtcdReset)
    }

    /// A watch on every key, from each member (see `watch.rs`).
    fn watch(&self) -> Option<&'static dyn crate::server::Watch> {
        Some(&super::watch::EtcdWatch)
    }
}
