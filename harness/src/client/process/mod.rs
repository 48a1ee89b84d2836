//! A lock implemented by any program that speaks the client protocol (docs/client-protocol.md):
//! lockpick starts one adapter process per client process and talks JSON lines with it, so a
//! GC pause is a real SIGSTOP of the library's process and a crash a real SIGKILL.

mod codec;
mod inside;

pub mod manifest;
mod options;
mod session;
mod spawn;
mod tree;

pub use super::adapter_error::AdapterError;
pub use codec::{Hello, PROTOCOL_VERSION};
pub use options::ProcessOptions;
pub(crate) use options::KIND;
pub use session::ProcessSession;

use super::lock::{Connecting, LockClient};
use super::pause::PausePoints;
use crate::server::Sentinels;
use crate::vocab::MsRange;
use serde_json::{Map, Value as Json};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The hello the first adapter of the run in `run_dir` answered with (the library and
/// version it runs), if any adapter started there.
pub fn read_hello(run_dir: &std::path::Path) -> Option<Hello> {
    let text = std::fs::read_to_string(spawn::hello_path(run_dir)).ok()?;
    match codec::parse_line(text.trim_end()) {
        Ok(codec::Parsed::Hello(hello)) => Some(hello),
        _ => None,
    }
}

/// How to start an adapter.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessSpec {
    /// Program and arguments; paths already resolved (against the scenario's folder).
    pub command: Vec<String>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// Extra fields of `init` (`extra`), passed as they are.
    pub extra: Map<String, Json>,
}

impl ProcessSpec {
    pub(crate) fn command_line(&self) -> String {
        self.command.join(" ")
    }
}

/// The lock parameters an adapter is told in `init`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessParams {
    pub lock: String,
    pub ttl_ms: u64,
    pub acquire_timeout_ms: u64,
    pub retry_delay: MsRange,
    pub op_timeout_ms: u64,
    /// lockpick's watchdog renews the lease: the adapter must support `renew`.
    pub watchdog: bool,
}

/// Settings shared by every session of one run.
#[derive(Debug)]
struct Config {
    spec: ProcessSpec,
    nodes: Vec<SocketAddr>,
    /// The server's sentinels, passed in `init` (`redis-sentinel`).
    sentinels: Option<Sentinels>,
    params: ProcessParams,
    /// How long an adapter may take to start and answer `init`.
    start_timeout: Duration,
}

/// Makes sessions that each run one adapter process.
pub struct ProcessLock {
    config: Arc<Config>,
    /// The first protocol break any session saw, until the driver takes it.
    broken: Arc<Mutex<Option<AdapterError>>>,
}

/// How long an adapter may take to start (a Python or Node runtime, a JVM, on a loaded
/// machine) and answer `init`, on top of the operation time limit. 30 s, not 15: with three
/// Hazelcast scenarios at once (21 JVMs on 2 cores) a client JVM took 10 s to print its first
/// line and 14 s to connect, and with its own bounded wait for the CP group all four clients of
/// each run missed 15 s (and a CI run's); a limit that load can reach is a harness error that
/// says nothing about the lock.
const START_TIMEOUT: Duration = Duration::from_secs(30);

impl ProcessLock {
    /// Adapters reach the lock nodes at `nodes` (their proxies); each writes its stderr to
    /// `clients/p<process>.stderr` in the run folder it is given on connect.
    pub fn new(spec: ProcessSpec, nodes: &[SocketAddr], params: ProcessParams) -> ProcessLock {
        let start_timeout = START_TIMEOUT + Duration::from_millis(params.op_timeout_ms);
        ProcessLock {
            config: Arc::new(Config {
                spec,
                nodes: nodes.to_vec(),
                sentinels: None,
                params,
                start_timeout,
            }),
            broken: Arc::default(),
        }
    }

    /// The same lock, its adapters told in `init` where the server's sentinels are.
    /// Precondition: no session was made yet.
    pub fn with_sentinels(mut self, sentinels: Sentinels) -> ProcessLock {
        Arc::get_mut(&mut self.config)
            .expect("sentinels are set before any session")
            .sentinels = Some(sentinels);
        self
    }
}

impl LockClient for ProcessLock {
    type Session = ProcessSession;

    /// A session outside a run (no client loop): its stderr goes to the temp folder.
    async fn connect(&self, seed: u64) -> Result<ProcessSession, String> {
        let who = Connecting {
            client: 0,
            process: 0,
            seed,
            run_dir: std::env::temp_dir().join(format!("lockpick-adapter-{}", std::process::id())),
        };
        self.connect_as(who, Arc::default()).await
    }

    async fn connect_as(
        &self,
        who: Connecting,
        points: Arc<PausePoints>,
    ) -> Result<ProcessSession, String> {
        ProcessSession::start(self.config.clone(), self.broken.clone(), who, &points)
            .await
            .map_err(|e| {
                let text = e.to_string();
                self.broken
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get_or_insert(e);
                text
            })
    }

    fn broken(&self) -> Option<AdapterError> {
        self.broken.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    fn lease_ms(&self) -> Option<u64> {
        Some(self.config.params.ttl_ms)
    }
}
