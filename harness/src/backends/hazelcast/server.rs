//! `hazelcast` and `hazelcast-unsafe`: Hazelcast 5.4 members (3 by default) from the jar
//! `scripts/setup` fetches, member links through lockpick's proxies; the CP Subsystem on over
//! every member, or off. The lock's TTL is the CP session TTL, a member setting
//! ([`SESSION_TTL_S`]), so a scenario's `ttl_ms` must name it.

use super::cluster::start_hz_cluster;
use super::process::SESSION_TTL_S;
use crate::server::{
    BoxFuture, Cannot, Capabilities, FieldError, Install, NodeRule, ServerKind, ServerVersion,
    StartCtx, StartError, Started, Support,
};
use crate::vocab::LockSpec;
use std::path::Path;

/// A Hazelcast server kind: CP Subsystem on or off.
pub(super) struct Hazelcast {
    cp: bool,
}

/// The CP Subsystem on: `cp-member-count` and `group-size` are the member count.
pub(super) static CP: Hazelcast = Hazelcast { cp: true };
/// The CP Subsystem off (`cp-member-count` 0): Hazelcast's "unsafe mode".
pub(super) static UNSAFE: Hazelcast = Hazelcast { cp: false };

/// The one release: 5.4, the newest line whose open-source edition has the CP Subsystem (5.5
/// made it Enterprise-only), from Maven Central (exact version in the pom).
static VERSIONS: &[ServerVersion] = &[ServerVersion {
    name: "5.4",
    install: Install::Setup {
        path: "servers/hazelcast-5.4/target/lib",
    },
}];

/// A CP group needs at least 3 members; odd so every split has a majority side.
const NODES: NodeRule = NodeRule {
    default: 3,
    min: 3,
    max: 7,
    odd: true,
};

/// The jars in `dir`, sorted so that the class path is the same on every machine.
fn jars_in(dir: &Path) -> String {
    let mut jars: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jar"))
        .filter_map(|p| p.to_str().map(str::to_owned))
        .collect();
    jars.sort();
    jars.join(":")
}

impl ServerKind for Hazelcast {
    fn waiters_keep_a_session(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        if self.cp {
            "hazelcast"
        } else {
            "hazelcast-unsafe"
        }
    }

    fn about(&self) -> &'static str {
        if self.cp {
            "Hazelcast members with the CP Subsystem (Raft) on, member links through proxies"
        } else {
            "Hazelcast members with the CP Subsystem off (its \"unsafe mode\", AP), member links through proxies"
        }
    }

    fn nodes(&self) -> NodeRule {
        NODES
    }

    fn start_cost_ms(&self) -> u64 {
        // Three JVMs starting and discovering the CP members on 2 cores; not yet measured
        // over a suite.
        15000
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            signals: Ok(()),
            // When a scenario moves clocks, each member runs Hazelcast's clock from its control
            // file (process.rs, `faketime`): the clock its CP sessions expire by.
            clock: Ok(()),
            peers: Ok(()),
            external: Err(Cannot::NotHere(
                "lockpick has not been tried on Hazelcast members it did not start",
            )),
            failover: Err(Cannot::Never(
                "its members are a cluster: the CP groups elect new leaders by themselves, the AP partitions move by themselves",
            )),
        }
    }

    fn versions(&self) -> &'static [ServerVersion] {
        VERSIONS
    }

    fn persistence(&self) -> Support {
        Err(Cannot::Never(
            "open-source Hazelcast keeps CP and AP state in memory only (CP Subsystem persistence is an Enterprise feature)",
        ))
    }

    fn check_lock(&self, lock: &LockSpec) -> Result<(), FieldError> {
        let ttl_ms = SESSION_TTL_S * 1000;
        if lock.ttl_ms != ttl_ms {
            return Err(FieldError {
                field: "lock.ttl_ms",
                message: format!(
                    "{} is not the members' CP session TTL, which the lock lives by; allowed: {ttl_ms}",
                    lock.ttl_ms
                ),
            });
        }
        Ok(())
    }

    fn start<'a>(&'a self, ctx: StartCtx<'a>) -> BoxFuture<'a, Result<Started, StartError>> {
        Box::pin(async move {
            let version = ctx.version.unwrap_or(&VERSIONS[0]);
            let dir = version
                .setup_path(self.name())?
                .expect("a version setup fetches");
            let class_path = jars_in(&dir);
            let (sup, proxies) = (ctx.supervisor, ctx.proxies);
            let (cluster, rests) =
                start_hz_cluster(sup, proxies, &ctx.nodes, &class_path, self.cp, ctx.faketime)
                    .await?;
            let mut started = crate::server::started_cluster(&ctx.nodes, cluster);
            started.endpoints.admin = ctx.nodes.iter().cloned().zip(rests).collect();
            Ok(started)
        })
    }

    /// With the CP Subsystem: the lock's CP group destroyed, and made again from scratch by the
    /// next run's first client ([`super::reset::HzReset`]). In unsafe mode every run starts its
    /// own members: the lock and its sessions live in the AP partitions, which no call empties.
    fn reset(&self) -> Option<&'static dyn crate::server::Reset> {
        if self.cp {
            Some(&super::reset::HzReset)
        } else {
            None
        }
    }

    /// None: no watcher yet: its CP FencedLock is no map entry a listener could follow.
    fn watch(&self) -> Option<&'static dyn crate::server::Watch> {
        None
    }
}
