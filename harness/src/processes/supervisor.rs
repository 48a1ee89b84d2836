//! The supervisor: owns the nodes of one run and is the one place that starts, pauses,
//! resumes, kills and restarts them. Every node is killed and reaped when it is dropped.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::child::Child;
use super::error::ProcessError;
use super::folder::NodeFolder;
use super::kind::NodeKind;
use super::launch::{launch, LaunchFailure};
use super::node::{NodeInfo, NodeState};
use super::ports::{lease_free_port, PortLease, ReservedPort};
use super::preflight::{find_binary, validate_name};
use super::registry::{self, SignalFailure};

/// Starts on a fresh port after "address in use", at most this many times.
const START_ATTEMPTS: usize = 5;
/// Restarts on the node's own port after "address in use", at most this many times.
const RESTART_ATTEMPTS: usize = 5;
const RESTART_RETRY_DELAY: Duration = Duration::from_millis(100);
/// Bound on how long `pause` waits for the process to show as stopped.
const STOP_WAIT: Duration = Duration::from_millis(200);
/// How long `Drop` waits for each killed child to be reaped.
const DROP_REAP_WAIT: Duration = Duration::from_secs(5);

/// One member for [`Supervisor::start_cluster`]: its name, kind (whose config already names
/// the member's ports and its peers'), and the ports reserved for it.
#[derive(Debug)]
pub struct MemberSpec {
    pub name: String,
    pub kind: NodeKind,
    /// Where clients connect.
    pub client: ReservedPort,
    /// Every other port the member listens on (peer, election); held as long as the node.
    pub other_ports: Vec<ReservedPort>,
}

/// Owns the backend nodes of one run.
pub struct Supervisor {
    run_dir: PathBuf,
    nodes: BTreeMap<String, Node>,
    /// Starts retried on a new port after "address in use".
    bind_retries: u64,
}

struct Node {
    kind: NodeKind,
    folder: NodeFolder,
    addr: SocketAddr,
    /// Keeps `addr`'s port for this node across kills and restarts (bound by us while the
    /// node is down).
    port: PortLease,
    /// Keeps the node's other ports (cluster peer ports) for it across kills and restarts.
    extra_ports: Vec<ReservedPort>,
    child: Child,
    paused: bool,
    /// The last process was killed by us, so its exit is not a crash.
    killed: bool,
    startup: Duration,
}

impl Node {
    fn alive(&self) -> bool {
        self.child.exit().is_none()
    }

    /// Binds the node's ports while it is down, so no other process takes them.
    fn hold_ports(&mut self) {
        self.port.hold();
        for p in &mut self.extra_ports {
            p.0.hold();
        }
    }

    /// Lets go of the node's ports for the process about to bind them.
    fn release_ports(&mut self) {
        self.port.release();
        for p in &mut self.extra_ports {
            p.release();
        }
    }

    fn info(&self, name: &str) -> NodeInfo {
        let state = match self.child.exit() {
            Some(_) if self.killed => NodeState::Killed,
            Some(how) => NodeState::Crashed(how),
            None if self.paused => NodeState::Paused,
            None => NodeState::Running,
        };
        NodeInfo {
            name: name.to_string(),
            addr: self.addr,
            pid: self.child.pid(),
            state,
            dir: self.folder.root.clone(),
            startup: self.startup,
        }
    }
}

impl Supervisor {
    /// A supervisor with no nodes. `run_dir` is the run's store folder; nodes go under
    /// `run_dir/nodes/<name>/`, created on start. Nothing is touched on disk yet.
    pub fn new(run_dir: &Path) -> Supervisor {
        Supervisor {
            run_dir: run_dir.to_path_buf(),
            nodes: BTreeMap::new(),
            bind_retries: 0,
        }
    }

    /// Starts a node of any kind (`start_redis` in the Redis backend is this for Redis).
    pub async fn start(&mut self, name: &str, kind: NodeKind) -> Result<NodeInfo, ProcessError> {
        validate_name(name)?;
        if self.nodes.contains_key(name) {
            return Err(ProcessError::DuplicateNode {
                name: name.to_string(),
            });
        }
        kind.validate()
            .map_err(|reason| ProcessError::InvalidOptions {
                node: name.to_string(),
                reason,
            })?;
        if find_binary(kind.binary()).is_none() {
            return Err(ProcessError::MissingBinary {
                binary: kind.binary().to_path_buf(),
                package: kind.package(),
            });
        }
        let folder = NodeFolder::new(&self.run_dir, name, kind.config_file());
        folder.create().map_err(|source| ProcessError::Folder {
            node: name.to_string(),
            path: folder.root.clone(),
            source,
        })?;
        let mut attempt = 0;
        let (addr, port, child, startup) = loop {
            attempt += 1;
            let mut port = lease_free_port().map_err(|source| ProcessError::Port {
                node: name.to_string(),
                source,
            })?;
            port.release();
            let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port.port()));
            match launch(name, &kind, &folder, addr).await {
                Ok((child, startup)) => break (addr, port, child, startup),
                Err(LaunchFailure::AddressInUse(err)) if attempt >= START_ATTEMPTS => {
                    return Err(err)
                }
                Err(LaunchFailure::AddressInUse(_)) => {
                    self.bind_retries += 1;
                    continue;
                }
                Err(LaunchFailure::Fatal(err)) => return Err(err),
            }
        };
        let node = Node {
            kind,
            folder,
            addr,
            port,
            extra_ports: Vec::new(),
            child,
            paused: false,
            killed: false,
            startup,
        };
        let info = node.info(name);
        self.nodes.insert(name.to_string(), node);
        Ok(info)
    }

    /// Starts the members of one cluster together and waits until every one is ready (for
    /// etcd: sees a leader), since no member of a new cluster is ready before a quorum runs.
    /// Ports are the caller's, reserved before the member configs were built. On any failure
    /// every member started here is killed; when a member found its port taken the error is
    /// [`ProcessError::ClusterPortTaken`] and the caller may try again with new ports.
    pub async fn start_cluster(
        &mut self,
        members: Vec<MemberSpec>,
    ) -> Result<Vec<NodeInfo>, ProcessError> {
        let mut prepared = Vec::new();
        for member in members {
            validate_name(&member.name)?;
            if self.nodes.contains_key(&member.name)
                || prepared
                    .iter()
                    .any(|(m, _): &(MemberSpec, _)| m.name == member.name)
            {
                return Err(ProcessError::DuplicateNode { name: member.name });
            }
            member
                .kind
                .validate()
                .map_err(|reason| ProcessError::InvalidOptions {
                    node: member.name.clone(),
                    reason,
                })?;
            if find_binary(member.kind.binary()).is_none() {
                return Err(ProcessError::MissingBinary {
                    binary: member.kind.binary().to_path_buf(),
                    package: member.kind.package(),
                });
            }
            let folder = NodeFolder::new(&self.run_dir, &member.name, member.kind.config_file());
            folder.create().map_err(|source| ProcessError::Folder {
                node: member.name.clone(),
                path: folder.root.clone(),
                source,
            })?;
            prepared.push((member, folder));
        }
        for (member, _) in &mut prepared {
            member.client.release();
            for p in &mut member.other_ports {
                p.release();
            }
        }
        let mut launches = tokio::task::JoinSet::new();
        for (index, (member, folder)) in prepared.iter().enumerate() {
            let (name, kind, folder) = (member.name.clone(), member.kind.clone(), folder.clone());
            let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, member.client.port()));
            launches.spawn(async move { (index, launch(&name, &kind, &folder, addr).await) });
        }
        let mut started = Vec::new();
        let mut first_error = None;
        let mut port_taken = false;
        while let Some(joined) = launches.join_next().await {
            match joined {
                Ok((index, Ok(child))) => started.push((index, child)),
                Ok((_, Err(LaunchFailure::AddressInUse(err)))) => {
                    port_taken = true;
                    first_error.get_or_insert(err);
                }
                Ok((_, Err(LaunchFailure::Fatal(err)))) => {
                    first_error.get_or_insert(err);
                }
                // A launch task only ends by returning; a panic there is a bug worth seeing.
                Err(join) => std::panic::resume_unwind(join.into_panic()),
            }
        }
        if let Some(err) = first_error {
            for (_, (child, _)) in &started {
                let _ = registry::signal(child.pid(), libc::SIGKILL);
            }
            for (_, (child, _)) in &started {
                child.wait().await;
            }
            if !port_taken {
                return Err(err);
            }
            // The caller retries with new ports and new configs in fresh folders; this
            // attempt's folders stay beside them, renamed, for their logs.
            self.bind_retries += 1;
            for (member, folder) in &prepared {
                let aside =
                    self.node_dir(&format!("{}.port-taken-{}", member.name, self.bind_retries));
                let _ = std::fs::rename(&folder.root, aside);
            }
            return Err(ProcessError::ClusterPortTaken {
                source: Box::new(err),
            });
        }
        started.sort_by_key(|(index, _)| *index);
        let mut infos = Vec::new();
        for ((member, folder), (_, (child, startup))) in prepared.into_iter().zip(started) {
            let node = Node {
                kind: member.kind,
                folder,
                addr: SocketAddr::from((Ipv4Addr::LOCALHOST, member.client.port())),
                port: member.client.0,
                extra_ports: member.other_ports,
                child,
                paused: false,
                killed: false,
                startup,
            };
            infos.push(node.info(&member.name));
            self.nodes.insert(member.name, node);
        }
        Ok(infos)
    }

    /// How many starts were retried on a new port because another process took the chosen
    /// one first (another run on the machine, most likely).
    pub fn bind_retries(&self) -> u64 {
        self.bind_retries
    }

    /// The one of `names` that leads its cluster right now, if any answers that it does.
    /// Paused or dead members are not asked. Several answers (an old leader cut off from the
    /// others still believes it leads) give the first in `names`' order.
    pub async fn leader(&self, names: &[String]) -> Option<String> {
        for name in names {
            let Some(node) = self.nodes.get(name) else {
                continue;
            };
            if node.paused || !node.alive() {
                continue;
            }
            if node.kind.is_leader(node.addr, &node.folder).await {
                return Some(name.clone());
            }
        }
        None
    }

    /// The folder node `name` has or will have (`<run_dir>/nodes/<name>`, absolute); its
    /// process runs with it as working directory.
    pub fn node_dir(&self, name: &str) -> PathBuf {
        NodeFolder::new(&self.run_dir, name, "").root
    }

    /// Every port the node `name` listens on (its client port first, then its peer ports), kept
    /// for it across kills and restarts.
    pub fn ports(&self, name: &str) -> Option<Vec<u16>> {
        self.nodes.get(name).map(|node| {
            std::iter::once(node.port.port())
                .chain(node.extra_ports.iter().map(ReservedPort::port))
                .collect()
        })
    }

    /// A snapshot of the node `name`, with its state as of now (a crash is seen as soon as
    /// the process has been reaped, which happens right after it exits).
    pub fn node(&self, name: &str) -> Option<NodeInfo> {
        self.nodes.get(name).map(|node| node.info(name))
    }

    /// Snapshots of all nodes, by name.
    pub fn nodes(&self) -> Vec<NodeInfo> {
        self.nodes
            .iter()
            .map(|(name, node)| node.info(name))
            .collect()
    }

    /// Freezes the node with SIGSTOP: it keeps its connections but answers nothing. Returns
    /// once the kernel shows the process stopped (signal delivery is asynchronous), or after
    /// a short bound if it never does.
    pub fn pause(&mut self, name: &str) -> Result<(), ProcessError> {
        let node = self.node_mut(name)?;
        signal(name, node, libc::SIGSTOP, "SIGSTOP")?;
        node.paused = true;
        let pid = node.child.pid();
        crate::blocking::off_runtime(|| wait_stopped(pid));
        Ok(())
    }

    /// Thaws a node paused by [`Supervisor::pause`] with SIGCONT. Resuming a running node is
    /// harmless.
    pub fn resume(&mut self, name: &str) -> Result<(), ProcessError> {
        let node = self.node_mut(name)?;
        signal(name, node, libc::SIGCONT, "SIGCONT")?;
        node.paused = false;
        Ok(())
    }

    /// Kills the node with SIGKILL (also when paused) and waits until it is reaped. Killing a
    /// node that is already dead succeeds and leaves its state as it was.
    pub async fn kill(&mut self, name: &str) -> Result<(), ProcessError> {
        let node = self.node_mut(name)?;
        if !node.alive() {
            return Ok(());
        }
        node.killed = true;
        match signal(name, node, libc::SIGKILL, "SIGKILL") {
            // It died on its own between the check and the signal; the reaper has it.
            Ok(()) | Err(ProcessError::NotRunning { .. }) => {}
            Err(err) => return Err(err),
        }
        node.child.wait().await;
        node.paused = false;
        node.hold_ports();
        Ok(())
    }

    /// Promotes the replica `name` to a primary (a failover) and waits until it takes writes;
    /// the node must be running. Returns its address.
    pub async fn promote(&self, name: &str) -> Result<SocketAddr, ProcessError> {
        let node = self.nodes.get(name).ok_or_else(|| ProcessError::Promote {
            node: name.to_owned(),
            reason: "no such node".to_owned(),
        })?;
        let (kind, addr) = (node.kind.clone(), node.addr);
        kind.promote(addr)
            .await
            .map_err(|reason| ProcessError::Promote {
                node: name.to_owned(),
                reason,
            })?;
        Ok(addr)
    }

    /// Starts the node again on the same port with the same folder, config and data (so an
    /// AOF written before a crash is replayed), and waits until it is ready. A node still
    /// running is killed first.
    pub async fn restart(&mut self, name: &str) -> Result<NodeInfo, ProcessError> {
        let mut infos = self.restart_all(&[name.to_owned()]).await?;
        Ok(infos.remove(0))
    }

    /// [`Supervisor::restart`] for several nodes at once: all are killed, then all start
    /// together, so bringing back two nodes takes about as long as one. A name given twice
    /// is restarted once (two launches on one port would both pass the readiness probe, the
    /// first process answering for the second, and the first would be lost untracked).
    /// Returns the first error; nodes that started are kept, one per name in first-seen order.
    pub async fn restart_all(&mut self, names: &[String]) -> Result<Vec<NodeInfo>, ProcessError> {
        let mut unique: Vec<String> = Vec::with_capacity(names.len());
        for name in names {
            if !unique.contains(name) {
                unique.push(name.clone());
            }
        }
        let names = &unique[..];
        for name in names {
            self.kill(name).await?;
        }
        let mut launches = tokio::task::JoinSet::new();
        for (index, name) in names.iter().enumerate() {
            let node = self.node_mut(name)?;
            node.release_ports();
            let (name, kind, folder, addr) = (
                name.clone(),
                node.kind.clone(),
                node.folder.clone(),
                node.addr,
            );
            launches.spawn(async move {
                let mut attempt = 0;
                loop {
                    attempt += 1;
                    match launch(&name, &kind, &folder, addr).await {
                        Ok(started) => return (index, Ok(started)),
                        Err(LaunchFailure::AddressInUse(err)) if attempt >= RESTART_ATTEMPTS => {
                            return (index, Err(err))
                        }
                        Err(LaunchFailure::AddressInUse(_)) => {
                            tokio::time::sleep(RESTART_RETRY_DELAY).await
                        }
                        Err(LaunchFailure::Fatal(err)) => return (index, Err(err)),
                    }
                }
            });
        }
        let mut first_error = None;
        let mut infos: Vec<Option<NodeInfo>> = vec![None; names.len()];
        while let Some(joined) = launches.join_next().await {
            let (index, result) = match joined {
                Ok(done) => done,
                // A launch task only ends by returning; a panic there is a bug worth seeing.
                Err(join) => std::panic::resume_unwind(join.into_panic()),
            };
            match result {
                Ok((child, startup)) => {
                    let name = &names[index];
                    let node = self.node_mut(name)?;
                    // Never drop track of a live process: a handle replaced while its process
                    // runs would leave it running past the supervisor.
                    if node.alive() {
                        let _ = registry::signal(node.child.pid(), libc::SIGKILL);
                        node.child.wait().await;
                    }
                    node.child = child;
                    node.killed = false;
                    node.paused = false;
                    node.startup = startup;
                    infos[index] = Some(node.info(name));
                }
                Err(err) => {
                    first_error.get_or_insert(err);
                }
            }
        }
        match first_error {
            Some(err) => Err(err),
            None => Ok(infos.into_iter().flatten().collect()),
        }
    }

    /// Kills every node and waits until all are reaped. The nodes stay known (state
    /// `Killed`), so they can be restarted.
    pub async fn stop_all(&mut self) {
        for node in self.nodes.values_mut() {
            if node.alive() {
                node.killed = true;
                let _ = registry::signal(node.child.pid(), libc::SIGKILL);
            }
        }
        for node in self.nodes.values_mut() {
            node.child.wait().await;
            node.paused = false;
        }
    }

    fn node_mut(&mut self, name: &str) -> Result<&mut Node, ProcessError> {
        self.nodes
            .get_mut(name)
            .ok_or_else(|| ProcessError::UnknownNode {
                name: name.to_string(),
            })
    }
}

impl Drop for Supervisor {
    /// Kills every live node and blocks until each is reaped (or five seconds passed for it,
    /// after which its reaper thread still reaps it). Runs on normal end, error and panic.
    fn drop(&mut self) {
        for node in self.nodes.values_mut() {
            if node.alive() {
                node.killed = true;
                let _ = registry::signal(node.child.pid(), libc::SIGKILL);
            }
        }
        for node in self.nodes.values() {
            node.child.wait_blocking(DROP_REAP_WAIT);
        }
    }
}

fn signal(
    name: &str,
    node: &Node,
    sig: libc::c_int,
    label: &'static str,
) -> Result<(), ProcessError> {
    registry::signal(node.child.pid(), sig).map_err(|failure| match failure {
        SignalFailure::NotRunning => ProcessError::NotRunning {
            node: name.to_string(),
            signal: label,
        },
        SignalFailure::Os(source) => ProcessError::Signal {
            node: name.to_string(),
            pid: node.child.pid(),
            signal: label,
            source,
        },
    })
}

/// Blocks until /proc shows `pid` stopped, at most [`STOP_WAIT`].
fn wait_stopped(pid: u32) {
    let deadline = Instant::now() + STOP_WAIT;
    while Instant::now() < deadline {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // The state letter follows the parenthesised command name.
        let state = stat
            .rfind(')')
            .and_then(|end| stat[end + 1..].trim_start().chars().next());
        if !matches!(state, Some('R' | 'S' | 'D')) {
            return;
        }
        std::thread::sleep(Duration::from_micros(100));
    }
}
