//! A run's servers (lock nodes, the resource's redis-server, the embedded proxy server) as one
//! instance, and the pool that keeps an instance up between consecutive runs on the same
//! server setup (a matrix row's cells): the next run resets it instead of starting its own.
//!
//! An instance is kept only when nothing a reset cannot undo happened to it: its server kind
//! has a [`Reset`](crate::server::Reset), every fault of the run says [`AfterRun::Reset`] or
//! [`AfterRun::Settle`] (the latter only on a kind that can wait for its members to agree),
//! every node is still running, and the run ended without an error or an interrupt. The reset
//! runs with every proxy healed (so a leftover toxic cannot break it), after the members
//! settled when a fault may have left some behind; if either fails the instance is stopped and
//! fresh servers start. Each run records the instance it used (`run.json`'s
//! `server_instance`), so a leak between runs can be traced.

use super::backend::{start_nodes, Nodes};
use super::error::RunError;
use super::plan::RunPlan;
use super::store::{discard_node_data, note_instance_dir, RunRecord};
use crate::backends::redis::RedisOptions;
use crate::fault::AfterRun;
use crate::processes::{NodeState, Supervisor};
use crate::proxy::{EmbeddedToxiproxy, FaultProxies};
use crate::scenario::Scenario;
use lockpick_store::ServerInstance;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// The node that holds the protected resource: not under test, so not counted as the lock's.
pub(super) const RESOURCE_NODE: &str = "resource";

/// How long each step of a reset may take before the instance is given up for fresh servers.
const RESET_LIMIT: Duration = Duration::from_secs(3);

/// How long members may take to agree again after a fault left some behind, before the
/// instance is given up for fresh servers (which take about as long to start: a ZooKeeper
/// ensemble 8 s here, an etcd cluster 2-3 s).
const SETTLE_LIMIT: Duration = Duration::from_secs(6);

/// What decides which servers a run starts: two runs with equal setups can share an instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setup {
    server: &'static str,
    release: Option<&'static str>,
    nodes: Vec<String>,
    persistence: crate::vocab::Persistence,
    faketime: bool,
}

impl Setup {
    /// The setup runs of `scenario` need.
    pub fn of(scenario: &Scenario) -> Setup {
        Setup {
            server: scenario.server.name(),
            release: scenario.version.map(|v| v.name),
            nodes: scenario.node_names(),
            persistence: scenario.persistence,
            faketime: scenario.has_clock_faults(),
        }
    }
}

/// Servers kept between runs. [`ServerPool::reusing`] keeps an instance whenever it may;
/// [`ServerPool::fresh`] never does (`--fresh-servers`, and every single run). Call
/// [`ServerPool::close`] when done; dropping it kills what it kept all the same.
pub struct ServerPool {
    reuse: bool,
    kept: Option<Instance>,
    /// Why the last instance was not kept, for the next run's record.
    dropped: Option<String>,
}

impl ServerPool {
    /// A pool that keeps an instance up for the next run whenever it may.
    pub fn reusing() -> ServerPool {
        ServerPool {
            reuse: true,
            kept: None,
            dropped: None,
        }
    }

    /// A pool that never keeps servers: every run starts and stops its own.
    pub fn fresh() -> ServerPool {
        ServerPool {
            reuse: false,
            kept: None,
            dropped: None,
        }
    }

    /// [`ServerPool::reusing`] or, without `reuse`, [`ServerPool::fresh`].
    pub fn new(reuse: bool) -> ServerPool {
        if reuse {
            ServerPool::reusing()
        } else {
            ServerPool::fresh()
        }
    }

    /// Whether this pool keeps servers of `setup`, which a run needing it can reset and use:
    /// a search that runs several pools at once gives a run to the pool that already has it.
    pub fn keeps(&self, setup: &Setup) -> bool {
        self.kept.as_ref().is_some_and(|k| k.setup == *setup)
    }

    /// Whether this pool keeps any servers.
    pub fn keeps_any(&self) -> bool {
        self.kept.is_some()
    }

    /// Stops the instance kept, if any.
    pub async fn close(&mut self) {
        if let Some(kept) = self.kept.take() {
            kept.teardown().await;
        }
    }

    /// The servers for `plan`'s run in `dir`: the kept instance reset when its setup is the
    /// same and the reset succeeds, else fresh ones (the kept instance stopped first).
    pub(super) async fn take(
        &mut self,
        plan: &RunPlan,
        dir: &Path,
        record: &RunRecord,
    ) -> Result<Instance, RunError> {
        let setup = Setup::of(&plan.scenario);
        let mut why_fresh = self.dropped.take();
        if let Some(mut kept) = self.kept.take() {
            if kept.setup == setup {
                let started = Instant::now();
                match kept.reset(&plan.scenario).await {
                    Ok(settled) => {
                        kept.runs += 1;
                        kept.unsettled = None;
                        kept.pids = lock_pids(&kept.supervisor).await;
                        let mut used = kept.record(started.elapsed(), None);
                        used.settle_ms = settled.map(|d| d.as_millis() as u64);
                        record.set_server_instance(used);
                        return Ok(kept);
                    }
                    Err(e) => {
                        eprintln!(
                            "lockpick: reset of the kept servers failed ({e}); starting fresh ones"
                        );
                        why_fresh = Some(format!("the reset of instance {} failed: {e}", kept.id));
                    }
                }
            } else {
                why_fresh = Some(format!(
                    "instance {} ran another server setup ({} {:?})",
                    kept.id, kept.setup.server, kept.setup.nodes
                ));
            }
            kept.teardown().await;
        }
        let fresh = Instance::start(plan, dir).await?;
        record.set_server_instance(fresh.record(Duration::ZERO, why_fresh));
        Ok(fresh)
    }

    /// After a run: keeps `instance` for the next one if it may, else stops it. `clean` says
    /// the run ended without an error or an interrupt.
    pub(super) async fn give_back(
        &mut self,
        plan: &RunPlan,
        instance: Instance,
        clean: bool,
        record: &RunRecord,
    ) {
        record.set_bind_retries(instance.supervisor.lock().await.bind_retries());
        match self.keepable(plan, &instance, clean).await {
            Ok(unsettled) => {
                let mut instance = instance;
                instance.unsettled = unsettled;
                self.kept = Some(instance);
            }
            Err(why) => {
                if self.reuse {
                    self.dropped = Some(why);
                }
                instance.teardown().await;
            }
        }
    }

    /// Whether `instance` may serve another run: `Ok` with what its members must settle from
    /// first (`None`: nothing), `Err` with why not.
    async fn keepable(
        &self,
        plan: &RunPlan,
        instance: &Instance,
        clean: bool,
    ) -> Result<Option<String>, String> {
        let scenario = &plan.scenario;
        if !self.reuse {
            return Err("fresh servers were asked for".to_owned());
        }
        if !instance.ours {
            return Err("the servers or the proxy server are not lockpick's own".to_owned());
        }
        if !clean {
            return Err("the last run ended with an error or an interrupt".to_owned());
        }
        let Some(reset) = scenario.server.reset() else {
            return Err(format!(
                "server kind {} has no reset",
                scenario.server.name()
            ));
        };
        let mut unsettled = None;
        for fault in &scenario.nemesis.faults {
            match fault.spec.after_run() {
                AfterRun::Reset => {}
                AfterRun::Settle(why) => {
                    if reset.settle().is_none() {
                        return Err(format!(
                            "the last run's fault {}: {why}, and server kind {} cannot tell \
                             that its members settled",
                            fault.spec.name(),
                            scenario.server.name()
                        ));
                    }
                    unsettled.get_or_insert_with(|| format!("{}: {why}", fault.spec.name()));
                }
                AfterRun::Restart(why) => {
                    return Err(format!("the last run's fault {}: {why}", fault.spec.name()))
                }
            }
        }
        for node in instance.supervisor.lock().await.nodes() {
            if node.state != NodeState::Running {
                return Err(format!("node {} is {:?}", node.name, node.state));
            }
        }
        Ok(unsettled)
    }
}

impl Drop for ServerPool {
    /// Without [`ServerPool::close`]: the kept nodes die with their supervisor; their data
    /// goes as a finished run's does.
    fn drop(&mut self) {
        if let Some(kept) = self.kept.take() {
            let (dir, keep_data) = (kept.started_in.clone(), kept.keep_data);
            drop(kept);
            if !keep_data {
                discard_node_data(&dir);
            }
            note_instance_dir(&dir, false);
        }
    }
}

/// One start of a run's servers, serving one run or several.
pub(super) struct Instance {
    pub(super) supervisor: Arc<Mutex<Supervisor>>,
    embedded: Option<EmbeddedToxiproxy>,
    pub(super) proxies: FaultProxies,
    pub(super) nodes: Nodes,
    /// The protected resource's redis-server.
    pub(super) resource: SocketAddr,
    setup: Setup,
    node_names: Vec<String>,
    /// Started by lockpick with its embedded proxy server: neither `--external` servers, nor
    /// an external Toxiproxy, nor a `--resource` of the user's, which others may share.
    ours: bool,
    keep_data: bool,
    id: String,
    started_in: PathBuf,
    runs: u32,
    pids: std::collections::BTreeMap<String, u32>,
    /// The fault of the last run that may have left members behind (and why), for the next
    /// reset to wait out first; `None` when there is nothing to wait for.
    unsettled: Option<String>,
}

impl Instance {
    /// Starts `plan`'s servers, their node folders in run folder `dir`.
    async fn start(plan: &RunPlan, dir: &Path) -> Result<Instance, RunError> {
        static STARTS: AtomicU64 = AtomicU64::new(0);
        let (scenario, opts) = (&plan.scenario, &plan.options);
        // Nodes die with the supervisor on every path (Drop kills them when the last holder,
        // the instance or the nemesis, lets go).
        let supervisor = Arc::new(Mutex::new(Supervisor::new(dir)));
        let embedded = match opts.toxiproxy {
            Some(_) => None,
            None => Some(EmbeddedToxiproxy::start(SocketAddr::from(([127, 0, 0, 1], 0))).await?),
        };
        let api = opts
            .toxiproxy
            .or(embedded.as_ref().map(|e| e.api_addr()))
            .expect("an external or an embedded toxiproxy");
        let proxies = FaultProxies::new(api)?.in_namespace(proxy_namespace());
        let ours = embedded.is_some() && opts.external.is_empty() && opts.resource.is_none();
        let shell = Shell {
            supervisor,
            embedded,
            proxies,
            node_names: scenario.node_names(),
            dir: dir.to_owned(),
            keep_data: opts.keep_data,
        };
        if !opts.keep_data {
            note_instance_dir(dir, true);
        }
        let started = async {
            let nodes =
                start_nodes(scenario, &shell.supervisor, &shell.proxies, &opts.external).await?;
            let resource = match opts.resource {
                Some(addr) => addr,
                None => {
                    shell
                        .supervisor
                        .lock()
                        .await
                        .start_redis(RESOURCE_NODE, RedisOptions::default())
                        .await?
                        .addr
                }
            };
            Ok::<_, RunError>((nodes, resource))
        }
        .await;
        let (nodes, resource) = match started {
            Ok(s) => s,
            Err(e) => {
                shell.teardown(None).await;
                return Err(e);
            }
        };
        let id = format!(
            "{}-{}-{}",
            super::store::utc_stamp(std::time::SystemTime::now()),
            std::process::id(),
            STARTS.fetch_add(1, Ordering::Relaxed) + 1
        );
        let pids = lock_pids(&shell.supervisor).await;
        Ok(Instance {
            supervisor: shell.supervisor,
            embedded: shell.embedded,
            proxies: shell.proxies,
            nodes,
            resource,
            setup: Setup::of(scenario),
            node_names: shell.node_names,
            ours,
            keep_data: shell.keep_data,
            id,
            started_in: shell.dir,
            runs: 1,
            pids,
            unsettled: None,
        })
    }

    /// What `run.json` records of this instance for the run it serves now.
    fn record(&self, reset: Duration, why_fresh: Option<String>) -> ServerInstance {
        ServerInstance {
            id: self.id.clone(),
            started_in: self
                .started_in
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            pids: self.pids.clone(),
            run: self.runs,
            reset_ms: reset.as_millis() as u64,
            settle_ms: None,
            why_fresh,
        }
    }

    /// Puts the instance back as a fresh start leaves it: every proxy healed first (so no
    /// toxic an earlier run left can break the reset), every node still running and its clock
    /// at real time, the members settled when the last run's faults may have left some behind
    /// (how long that took is returned), then the server kind's own reset through the healed
    /// proxies.
    async fn reset(&self, scenario: &Scenario) -> Result<Option<Duration>, String> {
        let reset = scenario
            .server
            .reset()
            .ok_or_else(|| format!("server kind {} has no reset", scenario.server.name()))?;
        tokio::time::timeout(RESET_LIMIT, self.proxies.reset())
            .await
            .map_err(|_| "heal the proxies: timeout".to_owned())?
            .map_err(|e| format!("heal the proxies: {e}"))?;
        for node in self.supervisor.lock().await.nodes() {
            if node.state != NodeState::Running {
                return Err(format!("node {} is {:?}", node.name, node.state));
            }
            // The nemesis put every clock it moved back already; a node under libfaketime is
            // set to real time once more, so no setting can outlive its run.
            let control = crate::processes::faketime::control_file(&node.dir);
            if self.setup.faketime && control.is_file() {
                crate::processes::faketime::set_clock(
                    &control,
                    crate::processes::faketime::ClockSetting::REAL,
                )
                .map_err(|e| format!("set {} to real time: {e}", control.display()))?;
            }
        }
        let settled = match &self.unsettled {
            None => None,
            Some(after) => {
                let settle = reset.settle().ok_or_else(|| {
                    format!("server kind {} cannot settle", scenario.server.name())
                })?;
                let started = Instant::now();
                (settle.settle(&self.nodes.endpoints, SETTLE_LIMIT).await)
                    .map_err(|e| format!("settle after {after}: {e}"))?;
                Some(started.elapsed())
            }
        };
        reset.reset(&self.nodes.endpoints, RESET_LIMIT).await?;
        Ok(settled)
    }

    /// Stops everything the instance started and removes its nodes' data (unless kept).
    pub(super) async fn teardown(self) {
        let Instance {
            supervisor,
            embedded,
            proxies,
            nodes,
            node_names,
            keep_data,
            started_in,
            ..
        } = self;
        let shell = Shell {
            supervisor,
            embedded,
            proxies,
            node_names,
            dir: started_in,
            keep_data,
        };
        shell.teardown(nodes.cluster).await;
    }
}

/// What an instance holds before its nodes are up: enough to tear down a start that failed.
struct Shell {
    supervisor: Arc<Mutex<Supervisor>>,
    embedded: Option<EmbeddedToxiproxy>,
    proxies: FaultProxies,
    node_names: Vec<String>,
    dir: PathBuf,
    keep_data: bool,
}

impl Shell {
    async fn teardown(self, cluster: Option<Arc<crate::cluster::ClusterNet>>) {
        // Proxies are removed even on an external server, which outlives us.
        if let Some(cluster) = cluster {
            cluster.delete().await;
        }
        for node in &self.node_names {
            let _ = self.proxies.delete(node).await;
        }
        if let Some(e) = self.embedded {
            e.shutdown().await;
        }
        self.supervisor.lock().await.stop_all().await;
        // Killed libfaketime nodes cannot remove their shared-memory files themselves.
        crate::processes::faketime::clean_stale_shm();
        if !self.keep_data {
            discard_node_data(&self.dir);
        }
        note_instance_dir(&self.dir, false);
    }
}

/// Each lock server node's process id now.
async fn lock_pids(supervisor: &Mutex<Supervisor>) -> std::collections::BTreeMap<String, u32> {
    supervisor
        .lock()
        .await
        .nodes()
        .into_iter()
        .filter(|n| n.name != RESOURCE_NODE)
        .map(|n| (n.name, n.pid))
        .collect()
}

/// A proxy-name prefix no other instance uses: unique per process (pid) and per instance in
/// it, so runs sharing one external Toxiproxy keep apart.
fn proxy_namespace() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    format!("lockpick-{}-{n}-", std::process::id())
}
