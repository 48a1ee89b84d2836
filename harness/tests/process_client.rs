//! Adapter processes speaking the client protocol: deliberately broken adapters (garbage line,
//! early exit, hang past the time limit, wrong reply id, missing program) end in a clear error
//! or an `info`, never a hang or an orphaned process; a real lock library (node `redlock`)
//! against real redis-servers through the real proxy records a correct history; a client GC
//! pause really stops the adapter process; a retired process's session is gone before its
//! successor connects.

use lockpick_checker::history::{read_history, EventKind, Process, F};
use lockpick_checker::lock::{LockCheckParams, Property};
use lockpick_checker::run_checks::check_run;
use lockpick_checker::verdict::Verdict;
use lockpick_harness::backends::redis::RedisOptions;
use lockpick_harness::backends::zookeeper::start_zk_cluster;
use lockpick_harness::client::process::{
    AdapterError, ProcessLock, ProcessParams, ProcessSession, ProcessSpec,
};
use lockpick_harness::client::{
    run_client, Broken, ClientCtx, Connecting, Interrupt, LockClient, LockSession, Outcome,
    PausePlan, PausePoints, StartGate,
};
use lockpick_harness::processes::{live_children, Supervisor};
use lockpick_harness::proxy::{EmbeddedToxiproxy, FaultProxies};
use lockpick_harness::recorder::Recorder;
use lockpick_harness::resource::Resource;
use lockpick_harness::scenario::{
    MsRange, PausePoint, ResourceMode, WorkloadKind, WorkloadSpec, ZK_TICK_MS,
};
use lockpick_harness::server::Sentinels;
use lockpick_harness::vocab::Discipline;
use serde_json::{Map, Value as Json};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn broken_adapter(mode: &str) -> ProcessSpec {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/broken_adapter.py");
    let mut extra = Map::new();
    extra.insert("break".to_owned(), Json::from(mode));
    ProcessSpec {
        command: vec!["python3".to_owned(), script.display().to_string()],
        env: Vec::new(),
        extra,
    }
}

fn params(ttl_ms: u64, op_timeout_ms: u64) -> ProcessParams {
    ProcessParams {
        lock: "lock".to_owned(),
        ttl_ms,
        acquire_timeout_ms: 300,
        retry_delay: MsRange { min: 5, max: 20 },
        op_timeout_ms,
        watchdog: false,
    }
}

fn who(process: u64, run_dir: &Path) -> Connecting {
    Connecting {
        client: 0,
        process,
        seed: 1,
        run_dir: run_dir.to_owned(),
    }
}

/// Waits until `pid` is no child of ours and no process at all (reaped), up to 5 s.
async fn assert_gone(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        // SAFETY: kill with signal 0 only checks whether the pid exists.
        let exists = unsafe { libc::kill(pid as libc::pid_t, 0) } == 0;
        if !exists && !live_children().contains(&pid) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "adapter {pid} outlived its session"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Starts an adapter that breaks the protocol as `mode` says, asks one acquire, and returns
/// its outcome and the error the lock kept for the driver.
async fn break_once(mode: &str) -> (Outcome<()>, Option<AdapterError>, Duration) {
    let run = tempfile::tempdir().unwrap();
    let nodes: [SocketAddr; 1] = [([127, 0, 0, 1], 9).into()];
    let lock = ProcessLock::new(broken_adapter(mode), &nodes, params(1000, 200));
    let mut session = lock
        .connect_as(who(7, run.path()), Arc::default())
        .await
        .expect("the broken adapter answers init properly");
    let pid = session.pid();
    assert!(session.stderr_path().ends_with("clients/p7.stderr"));
    let started = Instant::now();
    let outcome = session
        .acquire("7-a", Instant::now() + Duration::from_millis(300))
        .await
        .map(|_| ());
    let took = started.elapsed();
    drop(session);
    assert_gone(pid).await;
    (outcome, lock.broken(), took)
}

#[tokio::test]
async fn garbage_line_is_a_harness_error_naming_client_line_and_stderr() {
    let (outcome, broken, _) = break_once("garbage").await;
    assert_eq!(outcome, Outcome::Info("protocol-error".to_owned()));
    let message = broken
        .expect("a protocol break is kept for the driver")
        .to_string();
    assert!(message.contains("client 0 (process 7"), "{message}");
    assert!(
        message.contains("the line it sent: this is not json"),
        "{message}"
    );
    assert!(
        message.contains("broken adapter: mode garbage"),
        "{message}"
    );
}

#[tokio::test]
async fn early_exit_is_a_harness_error_with_exit_status_and_stderr_tail() {
    let (outcome, broken, _) = break_once("exit").await;
    assert_eq!(outcome, Outcome::Info("protocol-error".to_owned()));
    let message = broken.expect("an exit is kept for the driver").to_string();
    assert!(message.contains("closed its stdout"), "{message}");
    assert!(message.contains("exit code 3"), "{message}");
    assert!(message.contains("exiting on purpose"), "{message}");
    // It worked, then exited: nothing is missing, so nothing is said about installing.
    assert!(!message.contains("scripts/setup"), "{message}");
    assert!(!message.contains("not installed"), "{message}");
}

/// Starts the adapter `command` and returns the error it ends with before its hello.
async fn start_fails(command: Vec<String>) -> String {
    let run = tempfile::tempdir().unwrap();
    let spec = ProcessSpec {
        command,
        env: Vec::new(),
        extra: Map::new(),
    };
    let lock = ProcessLock::new(spec, &[], params(1000, 200));
    assert!(lock
        .connect_as(who(0, run.path()), Arc::default())
        .await
        .is_err());
    lock.broken().expect("a failed start is kept").to_string()
}

#[tokio::test]
async fn an_adapter_that_dies_before_its_hello_says_so_and_names_the_missing_python_module() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("adapter.py");
    std::fs::write(&script, "import lockpick_no_such_module\n").unwrap();
    let message = start_fails(vec!["python3".to_owned(), script.display().to_string()]).await;
    assert!(
        message.contains("waited for its hello (the answer to init; no other request was sent)"),
        "{message}"
    );
    assert!(!message.contains("reply to acquire"), "{message}");
    assert!(
        message
            .contains("the Python module `lockpick_no_such_module` is not installed for python3"),
        "{message}"
    );
    assert!(
        message.contains("clients/python/.venv/bin/python"),
        "{message}"
    );
}

#[tokio::test]
async fn an_adapter_missing_its_npm_package_is_told_to_run_npm_ci() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("adapter.js");
    std::fs::write(&script, "require('lockpick-no-such-package');\n").unwrap();
    let message = start_fails(vec!["node".to_owned(), script.display().to_string()]).await;
    assert!(message.contains("waited for its hello"), "{message}");
    assert!(
        message
            .contains("the Node module `lockpick-no-such-package` is not installed: run `npm ci`"),
        "{message}"
    );
}

#[tokio::test]
async fn an_adapter_that_refuses_its_init_is_a_usage_error_with_its_reason() {
    let run = tempfile::tempdir().unwrap();
    let lock = ProcessLock::new(broken_adapter("refuse"), &[], params(1000, 200));
    assert!(lock
        .connect_as(who(0, run.path()), Arc::default())
        .await
        .is_err());
    let error = lock.broken().expect("a refused init is kept");
    assert!(matches!(error, AdapterError::RefusedInit { .. }), "{error}");
    let message = error.to_string();
    assert!(
        message.contains("it refused to start as the scenario asks (its [client] init options, or what its reason names): init.break"),
        "{message}"
    );
}

#[tokio::test]
async fn an_adapter_whose_library_cannot_start_says_why_and_is_no_protocol_break() {
    // Init answered with `info` id 0: the library could not start (the Java helper's answer
    // when its library throws at start), told as that, with the reason and the stderr.
    let run = tempfile::tempdir().unwrap();
    let spec = broken_adapter("cannot-start");
    let lock = ProcessLock::new(spec, &[], params(1000, 200));
    assert!(lock
        .connect_as(who(0, run.path()), Arc::default())
        .await
        .is_err());
    let error = lock.broken().expect("a failed start is kept");
    assert!(matches!(error, AdapterError::StartFailed { .. }), "{error}");
    let message = error.to_string();
    assert!(
        message.contains("its library could not start: could not reach the cluster"),
        "{message}"
    );
    assert!(message.contains("cluster unreachable"), "{message}");
    assert!(!message.contains("broke the client protocol"), "{message}");
}

/// The note the fixture's first grant carries: the `sentinels` of its init, as JSON.
async fn sentinels_told(lock: ProcessLock) -> Json {
    let run = tempfile::tempdir().unwrap();
    let mut session = lock
        .connect_as(who(0, run.path()), Arc::default())
        .await
        .expect("the fixture answers init");
    let granted = session
        .acquire("0-a", Instant::now() + Duration::from_millis(300))
        .await;
    assert!(matches!(granted, Outcome::Ok(_)), "{granted:?}");
    let note = session.last_detail().note.expect("the fixture's note");
    serde_json::from_str(&note).unwrap()
}

#[tokio::test]
async fn init_tells_the_sentinels_and_master_name_only_on_a_sentinel_server() {
    let mut spec = broken_adapter("none");
    spec.extra
        .insert("echo_sentinels".to_owned(), Json::Bool(true));
    let nodes: [SocketAddr; 1] = [([127, 0, 0, 1], 9).into()];
    let plain = ProcessLock::new(spec.clone(), &nodes, params(1000, 200));
    assert_eq!(sentinels_told(plain).await, Json::Null, "absent elsewhere");

    let sentinels = Sentinels {
        master: "lockpick".to_owned(),
        addrs: vec![
            ([127, 0, 0, 1], 26379).into(),
            ([127, 0, 0, 1], 26380).into(),
        ],
        nat: vec![(([127, 0, 0, 1], 7000).into(), nodes[0])],
    };
    let on_sentinel = ProcessLock::new(spec, &nodes, params(1000, 200)).with_sentinels(sentinels);
    assert_eq!(
        sentinels_told(on_sentinel).await,
        serde_json::json!({"master": "lockpick", "addrs": ["127.0.0.1:26379", "127.0.0.1:26380"],
                           "nat": {"127.0.0.1:7000": "127.0.0.1:9"}})
    );
}

#[tokio::test]
async fn wrong_reply_id_is_a_harness_error() {
    let (outcome, broken, _) = break_once("wrong-id").await;
    assert_eq!(outcome, Outcome::Info("protocol-error".to_owned()));
    let message = broken
        .expect("a wrong id is kept for the driver")
        .to_string();
    assert!(message.contains("carries id 101"), "{message}");
}

#[tokio::test]
async fn hang_past_the_time_limit_is_info_and_the_process_is_killed() {
    let (outcome, broken, took) = break_once("hang").await;
    assert_eq!(outcome, Outcome::Info("timeout".to_owned()));
    assert!(broken.is_none(), "a slow adapter is no protocol break");
    // acquire_timeout (300 ms) + op_timeout (200 ms), with room for a loaded machine.
    assert!(took >= Duration::from_millis(450), "{took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[tokio::test]
async fn missing_program_names_how_to_install() {
    let run = tempfile::tempdir().unwrap();
    let spec = ProcessSpec {
        command: vec!["/nonexistent/lockpick/.venv/bin/python".to_owned()],
        env: Vec::new(),
        extra: Map::new(),
    };
    let lock = ProcessLock::new(spec, &[], params(1000, 200));
    assert!(lock
        .connect_as(who(0, run.path()), Arc::default())
        .await
        .is_err());
    let message = lock.broken().expect("a spawn failure is kept").to_string();
    assert!(
        message.contains("/nonexistent/lockpick/.venv/bin/python does not exist"),
        "{message}"
    );
    assert!(message.contains("bash scripts/setup"), "{message}");
}

/// A redis-server resource, a recorder, and what a client loop needs around them.
struct Bench {
    _run: tempfile::TempDir,
    dir: PathBuf,
    sup: Supervisor,
    recorder: Arc<Recorder>,
    resource: Resource,
    next_process: Arc<AtomicU64>,
    stop: CancellationToken,
    broken: Arc<Broken>,
}

impl Bench {
    async fn new(clients: usize) -> Bench {
        let run = tempfile::tempdir().unwrap();
        let dir = run.path().to_owned();
        let mut sup = Supervisor::new(&dir);
        let info = sup
            .start_redis("resource", RedisOptions::default())
            .await
            .unwrap();
        let resource = Resource::connect(info.addr, ResourceMode::Naive, Duration::from_secs(2))
            .await
            .unwrap();
        resource.clear().await.unwrap();
        Bench {
            recorder: Arc::new(Recorder::create(&dir.join("history.jsonl")).unwrap()),
            _run: run,
            dir,
            sup,
            resource,
            next_process: Arc::new(AtomicU64::new(clients as u64)),
            stop: CancellationToken::new(),
            broken: Arc::default(),
        }
    }

    /// A bench with `n` redis masters behind the proxies of an embedded Toxiproxy.
    async fn with_masters(clients: usize, n: usize) -> (Bench, EmbeddedToxiproxy, Vec<SocketAddr>) {
        let mut bench = Bench::new(clients).await;
        let toxiproxy = EmbeddedToxiproxy::start(([127, 0, 0, 1], 0).into())
            .await
            .unwrap();
        let proxies = FaultProxies::new(toxiproxy.api_addr()).unwrap();
        let nodes = masters(&mut bench, &proxies, n).await;
        (bench, toxiproxy, nodes)
    }

    async fn finish(mut self, toxiproxy: EmbeddedToxiproxy) {
        toxiproxy.shutdown().await;
        self.sup.stop_all().await;
    }

    fn ctx(&self, index: usize, points: Arc<PausePoints>, duration_ms: u64) -> ClientCtx {
        ClientCtx {
            index,
            recorder: self.recorder.clone(),
            locks: vec!["lock".to_owned()].into(),
            workload: WorkloadSpec {
                kind: WorkloadKind::FencedWrite,
                clients: 1,
                duration_ms,
                hold_ms: MsRange { min: 1, max: 5 },
                think_ms: MsRange { min: 0, max: 10 },
            },
            acquire_timeout: Duration::from_millis(2000),
            watchdog: false,
            // As a library's user (the default for adapter processes).
            discipline: Discipline::Trusting,
            resource: self.resource.clone(),
            points,
            next_process: self.next_process.clone(),
            seed: 1,
            stop: self.stop.clone(),
            // No signal reaches these loops: only the end of the run stops them.
            interrupt: tokio_util::sync::CancellationToken::new(),
            broken: self.broken.clone(),
            run_dir: self.dir.clone(),
            // Each loop starts on its own, as soon as its adapter said hello.
            start: Arc::new(StartGate::opened()),
        }
    }
}

#[tokio::test]
async fn a_client_loop_with_a_broken_adapter_stops_the_run_with_its_error() {
    let bench = Bench::new(1).await;
    let nodes: [SocketAddr; 1] = [([127, 0, 0, 1], 9).into()];
    let lock = Arc::new(ProcessLock::new(
        broken_adapter("garbage"),
        &nodes,
        params(1000, 200),
    ));
    let client = run_client(lock, bench.ctx(0, Arc::default(), 60_000));
    tokio::time::timeout(Duration::from_secs(20), client)
        .await
        .expect("the client loop ends on a protocol break instead of reconnecting forever");
    let error = bench.broken.take().expect("the break reaches the runner");
    assert!(error.to_string().contains("this is not json"), "{error}");
    bench.recorder.flush().unwrap();
    let events = read_history(bench.recorder.path()).unwrap();
    let last = events.last().unwrap();
    assert_eq!((last.kind, last.f), (EventKind::Info, F::Acquire));
    assert_eq!(last.error.as_deref(), Some("protocol-error"));
}

/// Three redis masters, each behind a proxy of an embedded Toxiproxy.
async fn masters(bench: &mut Bench, proxies: &FaultProxies, n: usize) -> Vec<SocketAddr> {
    let mut addrs = Vec::new();
    for i in 1..=n {
        let name = format!("n{i}");
        let info = bench
            .sup
            .start_redis(&name, RedisOptions::default())
            .await
            .unwrap();
        addrs.push(proxies.create(&name, info.addr).await.unwrap());
    }
    addrs
}

fn node_adapter(library: &str) -> ProcessSpec {
    let dir = repo().join("clients/node").join(library);
    assert!(
        dir.join("node_modules").is_dir(),
        "{} is not installed: run `bash scripts/setup`",
        dir.display()
    );
    ProcessSpec {
        command: vec![
            "node".to_owned(),
            dir.join("adapter.js").display().to_string(),
        ],
        env: Vec::new(),
        extra: Map::new(),
    }
}

/// The lock servers a library test runs against, each behind a proxy.
enum Servers {
    /// This many redis-server masters.
    Redis(usize),
    /// A three-member ZooKeeper ensemble.
    ZooKeeper,
}

/// Runs three clients of the adapter `spec` for 3 s or more against `servers` and returns the
/// history, checked: valid, with grants and releases, nothing unknown but the end of the run.
async fn run_library(spec: ProcessSpec, servers: Servers) -> Vec<lockpick_checker::history::Event> {
    let mut bench = Bench::new(3).await;
    let toxiproxy = EmbeddedToxiproxy::start(([127, 0, 0, 1], 0).into())
        .await
        .unwrap();
    let proxies = FaultProxies::new(toxiproxy.api_addr()).unwrap();
    let zk_supervisor = tokio::sync::Mutex::new(Supervisor::new(&bench.dir.join("zk")));
    let mut cluster = None;
    let (nodes, ttl_ms) = match servers {
        Servers::Redis(n) => (masters(&mut bench, &proxies, n).await, 1000),
        Servers::ZooKeeper => {
            let names: Vec<String> = (1..=3).map(|i| format!("n{i}")).collect();
            let started = start_zk_cluster(&zk_supervisor, &proxies, &names, ZK_TICK_MS)
                .await
                .unwrap();
            let addrs = started.client_addrs.clone();
            cluster = Some(started.net);
            (addrs, 2000)
        }
    };
    let lock = Arc::new(ProcessLock::new(spec, &nodes, params(ttl_ms, 1000)));
    let mut clients = tokio::task::JoinSet::new();
    for index in 0..3 {
        clients.spawn(run_client(
            lock.clone(),
            bench.ctx(index, Arc::default(), 3000),
        ));
    }
    // At least 3 s, and until 40 operations completed: on a loaded machine the adapters'
    // runtimes (and a ZooKeeper ensemble's JVMs) may take seconds to start.
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(3)
        || (bench.recorder.completed_ops() < 40 && started.elapsed() < Duration::from_secs(30))
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bench.stop.cancel();
    tokio::time::timeout(Duration::from_secs(20), async {
        while clients.join_next().await.is_some() {}
    })
    .await
    .expect("clients stop");
    if let Some(e) = bench.broken.take() {
        panic!("the adapter broke: {e}");
    }
    bench.recorder.finish().unwrap();
    let events = read_history(bench.recorder.path()).unwrap();
    let count =
        |f: F, kind: EventKind| events.iter().filter(|e| e.f == f && e.kind == kind).count();
    let summary: Vec<String> = events
        .iter()
        .filter(|e| e.kind != EventKind::Invoke)
        .take(12)
        .map(|e| format!("{:?} {:?} {:?} {:?}", e.process, e.kind, e.f, e.error))
        .collect();
    assert!(
        count(F::Acquire, EventKind::Ok) >= 5,
        "too few grants: {summary:#?}\n{}",
        stderr_of(&bench.dir.join("clients"))
    );
    assert!(count(F::Release, EventKind::Ok) >= 5);
    // Nothing unknown but the acquires the end of the run cut short.
    let unknown: Vec<_> = events
        .iter()
        .filter(|e| e.kind == EventKind::Info && e.error.as_deref() != Some("run-ended"))
        .collect();
    assert!(unknown.is_empty(), "{unknown:?}");
    let checks = check_run(
        &events,
        &LockCheckParams {
            property: Property::Exclusive,
            deadlock_ms: 0,
        },
    );
    assert_eq!(checks.verdict(), Verdict::Valid, "{:?}", checks.lock);
    if let Some(net) = cluster {
        net.delete().await;
    }
    zk_supervisor.lock().await.stop_all().await;
    toxiproxy.shutdown().await;
    bench.sup.stop_all().await;
    events
}

/// Every adapter stderr file in `dir`, for a failing test's message.
fn stderr_of(dir: &Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        out += &format!("{}:\n{text}\n", entry.path().display());
    }
    out
}

fn first_grant(events: &[lockpick_checker::history::Event]) -> &lockpick_checker::history::Event {
    events
        .iter()
        .find(|e| e.f == F::Acquire && e.kind == EventKind::Ok)
        .unwrap()
}

#[tokio::test]
async fn node_redlock_through_the_proxies_acquires_and_releases_with_a_valid_history() {
    let events = run_library(node_adapter("redlock-v4"), Servers::Redis(3)).await;
    let grant = first_grant(&events);
    assert_eq!(grant.value.token, None, "Redlock has no fencing token");
    assert!(grant.value.lease_ms.is_some_and(|ms| ms <= 1000));
}

#[tokio::test]
async fn python_redis_py_lock_through_the_proxy_acquires_and_releases_with_a_valid_history() {
    let events = run_library(python_adapter("redis_py"), Servers::Redis(1)).await;
    let grant = first_grant(&events);
    assert_eq!(
        grant.value.token, None,
        "redis-py's Lock has no fencing token"
    );
    assert_eq!(
        grant.value.lease_ms, None,
        "redis-py's Lock does not say how long it holds: the adapter claims no lease for it"
    );
}

#[tokio::test]
async fn python_kazoo_lock_through_the_proxies_acquires_and_releases_with_growing_tokens() {
    let events = run_library(python_adapter("kazoo"), Servers::ZooKeeper).await;
    let tokens: Vec<u64> = events
        .iter()
        .filter(|e| e.f == F::Acquire && e.kind == EventKind::Ok)
        .map(|e| {
            e.value
                .token
                .expect("kazoo's lock node has a sequence number")
        })
        .collect();
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "{tokens:?}");
}

#[tokio::test]
async fn node_redis_semaphore_mutex_and_redlock_mutex_acquire_and_release_with_a_valid_history() {
    run_library(node_adapter("redis-semaphore"), Servers::Redis(1)).await;
    let mut spec = node_adapter("redis-semaphore");
    spec.extra.insert("redlock".to_owned(), Json::Bool(true));
    run_library(spec, Servers::Redis(3)).await;
}

#[tokio::test]
async fn rust_redlock_crate_through_the_proxies_acquires_and_releases_with_a_valid_history() {
    let binary = repo().join("clients/rust/redlock/target/release/lockpick-adapter-redlock-rs");
    assert!(
        binary.exists(),
        "{} is missing: run `bash scripts/setup`",
        binary.display()
    );
    let spec = ProcessSpec {
        command: vec![binary.display().to_string()],
        env: Vec::new(),
        extra: Map::new(),
    };
    let events = run_library(spec, Servers::Redis(3)).await;
    let grant = first_grant(&events);
    assert_eq!(grant.value.token, None, "the crate has no fencing token");
    // Without faults a try takes far less than the TTL: the validity did not wrap.
    assert!(
        grant.value.lease_ms.is_some_and(|ms| ms <= 1000),
        "{grant:?}"
    );
}

fn python_adapter(library: &str) -> ProcessSpec {
    let python = repo().join("clients/python/.venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `bash scripts/setup`",
        python.display()
    );
    let script = repo()
        .join("clients/python")
        .join(library)
        .join("adapter.py");
    ProcessSpec {
        command: vec![python.display().to_string(), script.display().to_string()],
        env: Vec::new(),
        extra: Map::new(),
    }
}

/// Every shipped adapter (the folder of its `lockpick-adapter.json`, and how it is started).
fn shipped_adapters() -> Vec<(PathBuf, ProcessSpec)> {
    let rust = repo().join("clients/rust/redlock");
    let binary = rust.join("target/release/lockpick-adapter-redlock-rs");
    assert!(
        binary.exists(),
        "{} is missing: run `bash scripts/setup`",
        binary.display()
    );
    let mut all = vec![(
        rust,
        ProcessSpec {
            command: vec![binary.display().to_string()],
            env: Vec::new(),
            extra: Map::new(),
        },
    )];
    let rslock = repo().join("clients/rust/rslock");
    let binary = rslock.join("target/release/lockpick-adapter-rslock");
    assert!(
        binary.exists(),
        "{} is missing: run `bash scripts/setup`",
        binary.display()
    );
    all.push((
        rslock,
        ProcessSpec {
            command: vec![binary.display().to_string()],
            env: Vec::new(),
            extra: Map::new(),
        },
    ));
    for library in ["redlock-v4", "redlock-v5", "redis-semaphore"] {
        all.push((
            repo().join("clients/node").join(library),
            node_adapter(library),
        ));
    }
    for library in ["redis_py", "kazoo", "pottery", "redis_lock", "portalocker"] {
        all.push((
            repo().join("clients/python").join(library),
            python_adapter(library),
        ));
    }
    all
}

/// The reason `spec` with init `extra` is refused with, or a panic if it is not refused.
async fn refusal(mut spec: ProcessSpec, extra: Map<String, Json>) -> String {
    let run = tempfile::tempdir().unwrap();
    let command = spec.command.join(" ");
    spec.extra = extra;
    let nodes: [SocketAddr; 1] = [([127, 0, 0, 1], 9).into()];
    let lock = ProcessLock::new(spec, &nodes, params(1000, 2000));
    let started = lock.connect_as(who(0, run.path()), Arc::default()).await;
    assert!(
        started.is_err(),
        "{command} took options it does not declare"
    );
    match lock.broken() {
        Some(AdapterError::RefusedInit { reason, .. }) => reason,
        other => panic!("{command}: not refused with a fail reply: {other:?}"),
    }
}

#[tokio::test]
async fn every_shipped_adapter_answers_an_undeclared_or_mistyped_option_with_a_fail() {
    for (folder, spec) in shipped_adapters() {
        let manifest = lockpick_harness::client::process::manifest::read(
            &folder.join(lockpick_harness::client::process::manifest::MANIFEST),
        )
        .unwrap_or_else(|e| panic!("every shipped adapter declares its options: {e}"));
        let mut unknown = Map::new();
        unknown.insert("lockpick_no_such_option".to_owned(), Json::Bool(true));
        let why = refusal(spec.clone(), unknown).await;
        assert!(why.starts_with("init.lockpick_no_such_option: "), "{why}");
        for key in manifest.init.keys() {
            // A table where a boolean (or any other declared type) belongs.
            let mut mistyped = Map::new();
            mistyped.insert(key.clone(), serde_json::json!({"on": true}));
            let why = refusal(spec.clone(), mistyped).await;
            assert!(why.starts_with(&format!("init.{key}: ")), "{why}");
            assert!(why.contains("is not allowed; allowed: a boolean"), "{why}");
        }
    }
}

/// The scheduler state of `pid` from /proc (R, S, T, …).
fn state(pid: u32) -> char {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = stat.rsplit_once(')').unwrap().1;
    after.trim_start().chars().next().unwrap()
}

#[tokio::test]
async fn a_client_pause_stops_the_adapter_process_and_its_time_is_not_a_timeout() {
    let (bench, toxiproxy, nodes) = Bench::with_masters(1, 1).await;
    let lock = ProcessLock::new(node_adapter("redlock-v4"), &nodes, params(1000, 300));
    let points = Arc::new(PausePoints::default());
    let mut session: ProcessSession = lock
        .connect_as(who(0, &bench.dir), points.clone())
        .await
        .unwrap();
    let pid = session.pid();
    let Outcome::Ok(grant) = session
        .acquire("0-a", Instant::now() + Duration::from_secs(2))
        .await
    else {
        panic!("a free lock is granted");
    };
    points.set_paused(true);
    // SIGSTOP is delivered asynchronously: look a few times.
    let mut seen = ' ';
    for _ in 0..100 {
        seen = state(pid);
        if seen == 'T' {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(seen, 'T', "the adapter is stopped during the pause");
    // A request sent while it is stopped waits past op_timeout_ms without becoming `info`.
    let resume = {
        let points = points.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(800)).await;
            points.set_paused(false);
        })
    };
    let released = session.release(&grant).await;
    resume.await.unwrap();
    assert_ne!(state(pid), 'T');
    // The pause (800 ms) was shorter than the TTL: the release finds its own lock.
    assert_eq!(released, Outcome::Ok(()));
    drop(session);
    assert_gone(pid).await;
    bench.finish(toxiproxy).await;
}

#[tokio::test]
async fn a_crash_armed_by_the_nemesis_kills_the_adapter() {
    let (bench, toxiproxy, nodes) = Bench::with_masters(1, 1).await;
    let mut spec = node_adapter("redlock-v4");
    spec.env.push((
        "LOCKPICK_TEST_MARK".to_owned(),
        format!("crash-{}", std::process::id()),
    ));
    let lock = Arc::new(ProcessLock::new(spec, &nodes, params(1000, 300)));
    let points = Arc::new(PausePoints::default());
    points.arm(PausePlan {
        point: PausePoint::BeforeRelease,
        interrupt: Interrupt::Crash,
    });
    let mark = format!("crash-{}", std::process::id());
    let client = run_client(lock, bench.ctx(0, points, 60_000));
    let watch = async {
        // The adapter runs while the client works …
        loop {
            if !marked(&mark).is_empty() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    let (_, ended) = tokio::join!(
        tokio::time::timeout(Duration::from_secs(20), watch),
        tokio::time::timeout(Duration::from_secs(20), client),
    );
    ended.expect("a crashed client's loop ends");
    bench.recorder.flush().unwrap();
    let events = read_history(bench.recorder.path()).unwrap();
    assert!(events
        .iter()
        .any(|e| e.process == Process::Nemesis && e.f == F::Crash));
    // … and is gone (killed, reaped) once the crash ended the client.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !marked(&mark).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the crashed client's adapter lives on"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    bench.finish(toxiproxy).await;
}

/// Live (not zombie) processes whose environment holds `LOCKPICK_TEST_MARK=<mark>`.
fn marked(mark: &str) -> Vec<u32> {
    let wanted = format!("LOCKPICK_TEST_MARK={mark}");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        let has = environ
            .split(|b| *b == 0)
            .any(|var| var == wanted.as_bytes());
        if has
            && std::fs::read_to_string(entry.path().join("stat")).is_ok_and(|s| !s.contains(") Z"))
        {
            found.push(pid);
        }
    }
    found
}

#[tokio::test]
async fn a_gc_pause_freezes_the_library_auto_extension_so_another_client_gets_the_lock() {
    let (bench, toxiproxy, nodes) = Bench::with_masters(2, 3).await;
    let mut spec = node_adapter("redlock-v5");
    spec.extra
        .insert("auto_extend".to_owned(), Json::Bool(true));
    let lock = Arc::new(ProcessLock::new(
        spec,
        &nodes,
        // A generous time limit: the claim is about the pause, not about a loaded machine.
        params(1000, 2000),
    ));
    // Client 0 stops for 2.5 TTLs right before its write. Its redlock `using` timer would
    // extend the lock every ~670 ms if the process ran; stopped, it cannot.
    let paused = Arc::new(PausePoints::default());
    paused.arm(PausePlan {
        point: PausePoint::BeforeWrite,
        interrupt: Interrupt::Pause { ms: 2500 },
    });
    let mut clients = tokio::task::JoinSet::new();
    clients.spawn(run_client(lock.clone(), bench.ctx(0, paused.clone(), 6000)));
    clients.spawn(run_client(lock.clone(), bench.ctx(1, Arc::default(), 6000)));
    // Until client 0 took its pause (adapters may start slowly), then past its end.
    let started = Instant::now();
    while !paused.is_free() && started.elapsed() < Duration::from_secs(30) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(4000)).await;
    bench.stop.cancel();
    tokio::time::timeout(Duration::from_secs(30), async {
        while clients.join_next().await.is_some() {}
    })
    .await
    .expect("clients stop");
    assert!(bench.broken.take().is_none());
    bench.recorder.finish().unwrap();
    let events = read_history(bench.recorder.path()).unwrap();
    let at = |f: F| {
        events
            .iter()
            .find(|e| e.process == Process::Nemesis && e.f == f)
            .map(|e| e.time_ns)
            .expect("the pause ran")
    };
    let (pause, resume) = (at(F::Pause), at(F::Resume));
    let granted_meanwhile = events.iter().any(|e| {
        e.process == Process::Client(1)
            && e.f == F::Acquire
            && e.kind == EventKind::Ok
            && (pause..resume).contains(&e.time_ns)
    });
    assert!(
        granted_meanwhile,
        "client 1 got the lock while client 0 was stopped: its extension timer stood still"
    );
    // Back from the pause, the library found its lock expired and aborted the routine.
    let lost = events.iter().any(|e| {
        e.process == Process::Client(0)
            && e.f == F::Release
            && e.kind == EventKind::Fail
            && e.error.as_deref().is_some_and(|r| r.starts_with("lost"))
    });
    let mine: Vec<_> = events
        .iter()
        .filter(|e| e.process == Process::Client(0) && e.time_ns > resume)
        .take(6)
        .map(|e| format!("{:?} {:?} {:?}", e.kind, e.f, e.error))
        .collect();
    assert!(lost, "client 0 release reports the lost lock: {mine:?}");
    let checks = check_run(
        &events,
        &LockCheckParams {
            property: Property::Exclusive,
            deadlock_ms: 0,
        },
    );
    assert_eq!(checks.verdict(), Verdict::Invalid, "{:?}", checks.lock);
    bench.finish(toxiproxy).await;
}

const PDEATHSIG_HELPER_ENV: &str = "LOCKPICK_ADAPTER_PDEATHSIG_HELPER_DIR";
/// How the helper starts its adapter: `plain`, `fork` (the adapter forks a helper that leaves
/// its session and ignores SIGTERM) or `shell-fork` (the same, started through `sh -c`).
const PDEATHSIG_HELPER_SHAPE: &str = "LOCKPICK_ADAPTER_PDEATHSIG_HELPER_SHAPE";

/// The lingering broken adapter, started as `shape` says.
fn lingering_adapter(shape: &str) -> (ProcessSpec, usize) {
    let mut spec = broken_adapter("linger");
    match shape {
        "plain" => (spec, 0),
        "fork" => {
            spec.extra.insert("fork".to_owned(), Json::Bool(true));
            // At least the helper it forked below the spawned process.
            (spec, 1)
        }
        "shell-fork" => {
            spec.extra.insert("fork".to_owned(), Json::Bool(true));
            // `; exit $?` keeps the shell from exec'ing python: a wrapper that stays.
            let inner = format!("{} {}; exit $?", spec.command[0], spec.command[1]);
            spec.command = vec!["sh".to_owned(), "-c".to_owned(), inner];
            // At least the adapter and its helper below the shell.
            (spec, 2)
        }
        other => panic!("unknown helper shape {other}"),
    }
}

/// Not a test by itself: the child process of the `adapters_…_die_when_lockpick_is_sigkilled`
/// tests. It starts an adapter from a runtime on a thread that then ends, waits until the
/// adapter's process tree has the processes its shape makes, reports them on stdout and waits
/// to be SIGKILLed.
#[test]
#[ignore = "helper process, run by adapters_die_when_lockpick_is_sigkilled"]
fn helper_holds_an_adapter_until_killed() {
    let Some(dir) = std::env::var_os(PDEATHSIG_HELPER_ENV) else {
        return;
    };
    let shape = std::env::var(PDEATHSIG_HELPER_SHAPE).unwrap_or_else(|_| "plain".to_owned());
    let (spec, below) = lingering_adapter(&shape);
    let dir = PathBuf::from(dir);
    let session = std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let nodes: [SocketAddr; 1] = [([127, 0, 0, 1], 9).into()];
        let lock = ProcessLock::new(spec, &nodes, params(1000, 200));
        runtime
            .block_on(lock.connect_as(who(0, &dir), Arc::default()))
            .unwrap()
    })
    .join()
    .unwrap();
    let pid = session.pid();
    // The hello came after the fork, so the tree is complete; /proc may show it a moment later.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut tree = lockpick_harness::processes::descendants(pid);
    while tree.len() < below && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        tree = lockpick_harness::processes::descendants(pid);
    }
    let listed: Vec<String> = std::iter::once(pid)
        .chain(tree)
        .map(|p| p.to_string())
        .collect();
    println!("ADAPTER_TREE {}", listed.join(" "));
    std::thread::sleep(Duration::from_secs(30));
}

/// Runs the helper with `shape`, SIGKILLs it once its adapter runs, and returns the adapter's
/// processes still alive 2 s later (polled, so a loaded machine gets the whole 2 s).
fn survivors_of_a_sigkilled_lockpick(shape: &str, at_least: usize) -> Vec<u32> {
    use std::io::{BufRead, BufReader};
    let run = tempfile::tempdir().unwrap();
    let mut helper = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "helper_holds_an_adapter_until_killed",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(PDEATHSIG_HELPER_ENV, run.path())
        .env(PDEATHSIG_HELPER_SHAPE, shape)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(helper.stdout.take().unwrap());
    let tree: Vec<u32> = stdout
        .lines()
        .map_while(Result::ok)
        .find_map(|line| {
            let pids = line.split("ADAPTER_TREE ").nth(1)?;
            Some(
                pids.split_whitespace()
                    .filter_map(|p| p.parse().ok())
                    .collect(),
            )
        })
        .expect("helper did not report its adapter");
    // SAFETY: kill with signal 0 only checks whether the pid exists.
    let alive = |pid: &u32| unsafe { libc::kill(*pid as libc::pid_t, 0) } == 0
        && std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z"));
    assert!(
        tree.len() > at_least && tree.iter().all(alive),
        "the adapter's whole tree runs while its lockpick does: {tree:?}"
    );
    helper.kill().unwrap(); // SIGKILL: no Drop runs in the helper
    helper.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(2);
    while tree.iter().any(alive) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let survivors: Vec<u32> = tree.iter().copied().filter(alive).collect();
    for pid in &survivors {
        // SAFETY: plain kill(2) of a process this test found alive in the adapter's tree.
        unsafe { libc::kill(*pid as libc::pid_t, libc::SIGKILL) };
    }
    survivors
}

#[tokio::test]
async fn a_retired_adapters_whole_tree_is_killed_with_it() {
    // The ordinary path: the session ends (a retired or crashed process, the run's end).
    let run = tempfile::tempdir().unwrap();
    let nodes: [SocketAddr; 1] = [([127, 0, 0, 1], 9).into()];
    for shape in ["fork", "shell-fork"] {
        let (spec, below) = lingering_adapter(shape);
        let lock = ProcessLock::new(spec, &nodes, params(1000, 200));
        let session = lock
            .connect_as(who(0, run.path()), Arc::default())
            .await
            .unwrap();
        let pid = session.pid();
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut tree = lockpick_harness::processes::descendants(pid);
        while tree.len() < below && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
            tree = lockpick_harness::processes::descendants(pid);
        }
        assert!(tree.len() >= below, "{shape}: {tree:?}");
        drop(session);
        let gone = |p: &u32| {
            std::fs::read_to_string(format!("/proc/{p}/stat")).map_or(true, |s| s.contains(") Z"))
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        while !tree.iter().all(gone) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let left: Vec<u32> = tree.iter().copied().filter(|p| !gone(p)).collect();
        for p in &left {
            // SAFETY: plain kill(2) of a process this test found alive in the adapter's tree.
            unsafe { libc::kill(*p as libc::pid_t, libc::SIGKILL) };
        }
        assert_eq!(left, Vec::<u32>::new(), "{shape}: outlived its session");
        assert_gone(pid).await;
    }
}

#[test]
fn adapters_die_when_lockpick_is_sigkilled() {
    let survivors = survivors_of_a_sigkilled_lockpick("plain", 0);
    assert_eq!(
        survivors,
        Vec::<u32>::new(),
        "the adapter outlived its SIGKILLed lockpick"
    );
}

#[test]
fn an_adapters_forked_helper_that_ignores_sigterm_dies_when_lockpick_is_sigkilled() {
    let survivors = survivors_of_a_sigkilled_lockpick("fork", 1);
    assert_eq!(
        survivors,
        Vec::<u32>::new(),
        "part of the adapter's tree outlived its SIGKILLed lockpick"
    );
}

#[test]
fn an_adapter_started_through_a_shell_dies_whole_when_lockpick_is_sigkilled() {
    let survivors = survivors_of_a_sigkilled_lockpick("shell-fork", 2);
    assert_eq!(
        survivors,
        Vec::<u32>::new(),
        "part of the wrapped adapter's tree outlived its SIGKILLed lockpick"
    );
}

/// A lock whose first acquire never learns its outcome, and which counts its live sessions
/// (a session and its watchdog clones share one [`Alive`]).
struct ForgetfulLock {
    live: Arc<std::sync::atomic::AtomicUsize>,
    /// The live sessions each connect found.
    seen_at_connect: Arc<std::sync::Mutex<Vec<usize>>>,
}

struct Alive(Arc<std::sync::atomic::AtomicUsize>);

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[derive(Clone)]
struct ForgetfulSession {
    _alive: Arc<Alive>,
}

impl LockClient for ForgetfulLock {
    type Session = ForgetfulSession;

    async fn connect(&self, _seed: u64) -> Result<ForgetfulSession, String> {
        let live = self.live.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.seen_at_connect.lock().unwrap().push(live);
        Ok(ForgetfulSession {
            _alive: Arc::new(Alive(self.live.clone())),
        })
    }

    fn lease_ms(&self) -> Option<u64> {
        Some(1000)
    }
}

impl LockSession for ForgetfulSession {
    async fn acquire(
        &mut self,
        _holder: &str,
        _deadline: Instant,
    ) -> Outcome<lockpick_harness::client::Grant> {
        Outcome::Info("timeout".to_owned())
    }

    async fn release(&mut self, _grant: &lockpick_harness::client::Grant) -> Outcome<()> {
        Outcome::Fail("not-owner".to_owned())
    }

    async fn renew(&mut self, _grant: &lockpick_harness::client::Grant) -> Outcome<()> {
        Outcome::Fail("lost".to_owned())
    }
}

/// A retired process's session (its connections, its server-side session, its adapter) is
/// gone before its successor connects: kept while a new session was sought (seconds, with
/// servers down), a ZooKeeper session went on pinging and kept the retired holder's lock
/// node, and every waiter starved behind it (zookeeper × server-pause, seed 14, STUCK).
#[tokio::test]
async fn a_retired_process_session_is_dropped_before_its_successor_connects() {
    let bench = Bench::new(1).await;
    let lock = Arc::new(ForgetfulLock {
        live: Arc::default(),
        seen_at_connect: Arc::default(),
    });
    let client = tokio::spawn(run_client(
        lock.clone(),
        bench.ctx(0, Arc::default(), 60_000),
    ));
    // Every round retires its process: wait for a few successors.
    let deadline = Instant::now() + Duration::from_secs(20);
    while lock.seen_at_connect.lock().unwrap().len() < 4 {
        assert!(
            Instant::now() < deadline,
            "the client loop stopped reconnecting"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    bench.stop.cancel();
    client.await.unwrap();
    let seen = lock.seen_at_connect.lock().unwrap().clone();
    assert!(
        seen.iter().all(|&live| live == 0),
        "live sessions found by each connect: {seen:?} (a retired session outlived its process)"
    );
    bench.recorder.flush().unwrap();
    let events = read_history(bench.recorder.path()).unwrap();
    let processes: std::collections::BTreeSet<_> = events.iter().map(|e| e.process).collect();
    assert!(
        processes.len() >= 3,
        "each retirement took a new process id: {processes:?}"
    );
}
