//! Carries out one run: backend up, proxies in front, clients and nemesis running, history
//! recorded, everything torn down on every path, then the history checked.

use super::backend::build_clients;
use super::error::RunError;
use super::options::RunOptions;
use super::plan::{RunPlan, Swapped};
use super::servers::{Instance, ServerPool, RESOURCE_NODE};
use super::soak::{LiveCheck, Sampler};
use super::store::{create_run_dir, interrupt_signal, write_store_file, RunRecord};
use crate::client::{Broken, ClientCtx, PausePoints, StartGate};
use crate::nemesis::{run_nemesis, NemesisCtx};
use crate::processes::{NodeState, Supervisor};
use crate::recorder::Recorder;
use crate::resource::Resource;
use crate::scenario::{Scenario, WorkloadKind};
use crate::server::record::ServerLog;
use crate::server::{WatchCtx, Watching};
use lockpick_checker::history::{EventKind, Process, Value, F};
use lockpick_checker::lock::LockCheckParams;
use lockpick_checker::results::{RunResults, ServerRan, RESULTS_VERSION};
use lockpick_checker::run_checks::check_run_file_with_server;
use lockpick_checker::server_record::{read_server_record_in, SERVER_RECORD_FILE};
use lockpick_store::{Ended, Phase};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// What a finished run produced.
#[derive(Debug)]
pub struct RunOutcome {
    /// The run's store folder.
    pub dir: PathBuf,
    /// What was written to `results.json` there.
    pub results: RunResults,
}

/// Runs `scenario` with `opts`: [`RunPlan::new`], then [`run_plan`]. `interrupt` is
/// cancelled on SIGINT/SIGTERM: the workload stops, the teardown and the check of what was
/// recorded still happen.
pub async fn run_scenario(
    scenario: &Scenario,
    opts: &RunOptions,
    interrupt: CancellationToken,
) -> Result<RunOutcome, RunError> {
    let plan = RunPlan::new(scenario, opts)?;
    run_plan(&plan, interrupt).await
}

/// [`run_scenario`] on servers from `pool`: the servers an earlier run of the same setup
/// left in it (reset), or fresh ones, which stay in it for the next run when they may.
pub async fn run_scenario_in(
    scenario: &Scenario,
    opts: &RunOptions,
    interrupt: CancellationToken,
    pool: &mut ServerPool,
) -> Result<RunOutcome, RunError> {
    let plan = RunPlan::new(scenario, opts)?;
    run_plan_in(&plan, interrupt, pool).await
}

/// Carries out `plan`.
///
/// The run folder is born whole before any server starts (scenario, schedule, an empty
/// history and `run.json`), and `run.json` follows the run through its phases, so a run
/// killed at any point leaves a folder that says how far it got.
pub async fn run_plan(
    plan: &RunPlan,
    interrupt: CancellationToken,
) -> Result<RunOutcome, RunError> {
    let mut pool = ServerPool::fresh();
    let outcome = run_plan_in(plan, interrupt, &mut pool).await;
    pool.close().await;
    outcome
}

/// [`run_plan`] on servers from `pool` (see [`run_scenario_in`]).
pub async fn run_plan_in(
    plan: &RunPlan,
    interrupt: CancellationToken,
    pool: &mut ServerPool,
) -> Result<RunOutcome, RunError> {
    let scenario = &plan.scenario;
    let opts = &plan.options;
    if !opts.external.is_empty() {
        super::external::check_reachable(&scenario.node_names(), &opts.external).await?;
    }
    // libfaketime files of nodes an earlier, killed run left behind.
    crate::processes::faketime::clean_stale_shm();
    let dir = create_run_dir(&opts.store, &scenario.name, plan.seed)?;
    let mut text = std::fs::read_to_string(&scenario.path).unwrap_or_default();
    if let Some(swapped) = &plan.swapped {
        text.insert_str(0, &backend_note(swapped, scenario));
    }
    write_store_file(&dir.join("scenario.toml"), text.as_bytes())?;
    write_store_file(
        &dir.join("schedule.json"),
        &serde_json::to_vec_pretty(&plan.schedule).expect("schedule serializes"),
    )?;
    write_store_file(&dir.join("history.jsonl"), b"")?;
    let record = RunRecord::create(&dir, opts.keep_data)?;
    let result = run_recorded(plan, &dir, &record, interrupt, pool).await;
    let (phase, ended) = match &result {
        Ok(outcome) => (
            Phase::Done,
            Ended::Checked {
                verdict: outcome.results.verdict,
                interrupted_by: outcome
                    .results
                    .interrupted
                    .then(|| interrupt_signal().unwrap_or_else(|| "a signal".to_owned())),
            },
        ),
        Err(e) => (
            record.phase(),
            Ended::HarnessError {
                message: e.to_string(),
            },
        ),
    };
    // A run that already failed reports that failure, not a second one of the store.
    match record.end(phase, ended) {
        Err(e) if result.is_ok() => Err(e),
        _ => result,
    }
}

/// The run after its folder exists: servers up, workload, teardown, check.
async fn run_recorded(
    plan: &RunPlan,
    dir: &Path,
    record: &RunRecord,
    interrupt: CancellationToken,
    pool: &mut ServerPool,
) -> Result<RunOutcome, RunError> {
    let (scenario, opts) = (&plan.scenario, &plan.options);
    record.advance(Phase::ServersStarting)?;
    let servers = pool.take(plan, dir, record).await?;
    let recorded = run_with(plan, &servers, dir, record, interrupt.clone()).await;
    let clean = recorded.is_ok() && !interrupt.is_cancelled();
    pool.give_back(plan, servers, clean, record).await;
    let recorded = recorded?;

    record.advance(Phase::Checking)?;
    // One streaming pass: memory follows the operations in flight, not the history's length.
    // A soak's pass ran beside the workload and only reads what is left.
    let checks = match recorded.live {
        Some(live) => tokio::task::spawn_blocking(move || live.finish())
            .await
            .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))?,
        // Off the runtime: a linearizability search may take its whole budget, and the runs
        // going at once beside this one (a matrix's, an exploration's) share it.
        None => crate::blocking::off_runtime(|| -> Result<_, RunError> {
            // The server's own record, when the run kept one, beside the holders' beliefs.
            let server = read_server_record_in(dir)?.map(|r| r.events);
            Ok(check_run_file_with_server(
                &dir.join("history.jsonl"),
                &check_params(scenario),
                Some(scenario.exposure_plan()),
                server,
            )?)
        })?,
    }
    .checks;
    let results = RunResults {
        v: RESULTS_VERSION,
        scenario: scenario.name.clone(),
        backend: scenario.lock_name(),
        seed: plan.seed,
        verdict: checks.verdict(),
        not_exposed: checks.not_exposed(),
        exposed_by: checks.exposed_by(),
        exposures: checks.exposure.clone(),
        expected: scenario.expected,
        interrupted: interrupt.is_cancelled(),
        workload_ms: recorded.workload_time.as_millis() as u64,
        ops: recorded.ops,
        history: "history.jsonl".to_owned(),
        reproduce: opts.reproduce.clone(),
        lock: checks.lock,
        linearizability: checks.linearizability,
        server: Some(ServerRan {
            kind: scenario.server.name().to_owned(),
            release: scenario.version.map(|v| v.name.to_owned()),
            version: recorded.server_version.clone(),
            instance: record
                .server_instance()
                .map(|i| format!("{}, its run {}", i.id, i.run)),
        }),
        discipline: Some(scenario.client.discipline.name().to_owned()),
        library: crate::client::process::read_hello(dir)
            .map(|h| format!("{} {}", h.library, h.version)),
        description: (!scenario.description.is_empty()).then(|| scenario.description.clone()),
    };
    write_store_file(
        &dir.join("results.json"),
        &serde_json::to_vec_pretty(&results).expect("results serialize"),
    )?;
    Ok(RunOutcome {
        dir: dir.to_owned(),
        results,
    })
}

/// What the lock checks of `scenario`'s runs are asked.
fn check_params(scenario: &Scenario) -> LockCheckParams {
    LockCheckParams {
        property: scenario.property,
        deadlock_ms: scenario.deadlock_ms,
    }
}

/// What the workload left for the check.
struct Recorded {
    workload_time: Duration,
    ops: u64,
    /// The servers' version as they reported it.
    server_version: Option<String>,
    /// A soak's check, reading the history since it began.
    live: Option<LiveCheck>,
}

async fn run_with(
    plan: &RunPlan,
    servers: &Instance,
    dir: &Path,
    record: &RunRecord,
    interrupt: CancellationToken,
) -> Result<Recorded, RunError> {
    let (scenario, opts) = (&plan.scenario, &plan.options);
    let (seed, clients, duration_ms) = (plan.seed, plan.clients, plan.duration_ms);
    let supervisor = &servers.supervisor;
    let backend_clients = build_clients(scenario, &servers.nodes.endpoints, dir)?;
    let resource_addr = servers.resource;
    let op_timeout = Duration::from_millis(scenario.lock.op_timeout_ms);
    let locks: Arc<[String]> = scenario.lock.names().into();
    // The resource is not under test: it gets no proxy and a generous time limit.
    let resource = Resource::connect(
        resource_addr,
        scenario.resource,
        op_timeout.max(Duration::from_secs(2)),
    )
    .await
    .map_err(RunError::Resource)?
    .with_locks(&locks);
    resource.clear().await.map_err(RunError::Resource)?;

    record.advance(Phase::Workload)?;
    let recorder = Arc::new(Recorder::create(&dir.join("history.jsonl"))?);
    // After the reset of reused servers (so no earlier run's key is seen) and before any
    // client acts (so every change of this run's is).
    let watch = start_watch(scenario, servers, opts, dir, &recorder).await?;
    let mut soak = match plan.soak_cycle_ms {
        Some(cycle_ms) => Some((
            LiveCheck::start(
                &dir.join("history.jsonl"),
                check_params(scenario),
                scenario.exposure_plan(),
            )?,
            Sampler::new(dir, duration_ms, cycle_ms, clients),
        )),
        None => None,
    };
    let points: Vec<Arc<PausePoints>> = (0..clients).map(|_| Arc::default()).collect();
    let next_process = Arc::new(AtomicU64::new(clients as u64));
    let stop = interrupt.child_token();
    let broken = Arc::new(Broken::default());
    let start_gate = Arc::new(StartGate::default());
    let mut tasks = JoinSet::new();
    let ctx = |index: usize| ClientCtx {
        index,
        recorder: recorder.clone(),
        locks: locks.clone(),
        workload: scenario.workload.clone(),
        acquire_timeout: Duration::from_millis(scenario.lock.acquire_timeout_ms),
        watchdog: scenario.lock.watchdog,
        discipline: scenario.client.discipline,
        resource: resource.clone(),
        points: points[index].clone(),
        next_process: next_process.clone(),
        seed,
        stop: stop.clone(),
        interrupt: interrupt.clone(),
        broken: broken.clone(),
        run_dir: dir.to_owned(),
        start: start_gate.clone(),
    };
    backend_clients.spawn(&mut tasks, clients, &ctx);
    // The workload's clock, the nemesis's and the history's start once every client has its
    // first session: an adapter's runtime and library may take a second or more to start.
    tokio::select! {
        _ = interrupt.cancelled() => {}
        _ = broken.reported() => {}
        _ = start_gate.all_arrived(clients, START_LINE_LIMIT) => {}
    }
    let started = recorder.restart_clock();
    start_gate.open();
    let stall = super::stall::StallWatch::start(started);
    let cpu_at_start = server_cpu(supervisor).await;
    let nemesis = tokio::spawn(run_nemesis(
        plan.schedule.clone(),
        NemesisCtx {
            proxies: servers.proxies.clone(),
            recorder: recorder.clone(),
            points: points.clone(),
            start: started,
            stop: stop.clone(),
            supervisor: supervisor.clone(),
            cluster: servers.nodes.cluster.clone(),
        },
    ));

    let progress = super::progress::Progress::new(opts.progress, duration_ms);
    let end = started + Duration::from_millis(duration_ms);
    loop {
        tokio::select! {
            _ = interrupt.cancelled() => break,
            // A client broke the harness: nothing after this would be a verdict.
            _ = broken.reported() => break,
            _ = tokio::time::sleep_until(end.into()) => break,
            _ = tokio::time::sleep(Duration::from_millis(200)) => {
                progress.update(started.elapsed(), recorder.completed_ops());
                if let Some((_, sampler)) = &mut soak {
                    sampler.tick(started.elapsed(), recorder.completed_ops());
                }
            }
        }
    }
    stop.cancel();
    let workload_time = started.elapsed();
    record.set_runtime_stall(stall.finish().await);
    let cpu_at_end = server_cpu(supervisor).await;
    record.set_server_cpu(
        cpu_at_end
            .iter()
            .filter_map(|(node, end)| {
                // A node restarted during the workload started counting again: no figure.
                let start = cpu_at_start.get(node)?;
                Some((node.clone(), end.checked_sub(*start)?))
            })
            .collect(),
    );
    record.advance(Phase::Teardown)?;
    progress.finish();

    // In-flight operations finish (a pause runs its course); a stuck one is abandoned after
    // a bound that no healthy operation reaches.
    let grace = Duration::from_millis(
        scenario.lock.acquire_timeout_ms + 4 * scenario.lock.op_timeout_ms + 10_000,
    ) + max_pause(scenario);
    let _ = tokio::time::timeout(grace, async { while tasks.join_next().await.is_some() {} }).await;
    tasks.abort_all();
    let nemesis_result = nemesis.await.unwrap_or(Ok(()));
    // After the last release: the watchers catch up with it, then stop.
    if let Some((log, watching)) = watch {
        watching.finish(WATCH_FINISH_LIMIT).await;
        log.finish()?;
    }

    if scenario.workload.kind == WorkloadKind::Counter {
        final_read(
            &recorder,
            &resource,
            next_process.load(std::sync::atomic::Ordering::SeqCst),
        )
        .await;
    }
    recorder.finish()?;
    let live = match soak {
        Some((live, sampler)) => {
            let complete =
                !interrupt.is_cancelled() && workload_time.as_millis() >= u128::from(duration_ms);
            sampler.finish(workload_time, recorder.completed_ops(), complete)?;
            Some(live)
        }
        None => None,
    };
    if let Some(error) = broken.take() {
        return Err(RunError::Adapter(Box::new(error)));
    }
    nemesis_result?;
    // A server that exited on its own during the run (not killed by a fault): what the clients
    // saw of the lock after that is not the scenario's, and lockpick cannot tell a server's own
    // crash under a fault from one its harness caused (the MariaDB watcher's statement did
    // that: backends/mariadb/watch.rs). So no verdict: the run ends in an error naming the node
    // and its log, where the finding is.
    let exited: Vec<(String, String, PathBuf)> = (supervisor.lock().await.nodes().into_iter())
        .filter_map(|n| match n.state {
            NodeState::Crashed(how) => Some((n.name, how, n.dir.join("server.log"))),
            NodeState::Running | NodeState::Paused | NodeState::Killed => None,
        })
        .collect();
    if let Some((node, how, log)) = exited.into_iter().next() {
        return Err(RunError::ServerExited { node, how, log });
    }

    Ok(Recorded {
        workload_time,
        ops: recorder.completed_ops(),
        server_version: servers.nodes.version.clone(),
        live,
    })
}

/// How long the watchers may take to catch up with their nodes at a run's end.
const WATCH_FINISH_LIMIT: Duration = Duration::from_secs(5);

/// Starts the server kind's watcher on every lock node, writing `server.jsonl` in `dir`, when
/// the kind has one and the scenario did not turn it off (`[server] record = false`). The
/// nodes are reached directly: lockpick's own at the address their proxy points at, external
/// ones at the address given.
async fn start_watch(
    scenario: &Scenario,
    servers: &Instance,
    opts: &super::options::RunOptions,
    dir: &Path,
    recorder: &Arc<Recorder>,
) -> Result<Option<(Arc<ServerLog>, Watching)>, RunError> {
    // Someone else's servers are only watched when the scenario asks: the watcher changes a
    // server setting (keyspace notifications) that is not lockpick's to change unasked.
    let wanted = scenario.record_server.unwrap_or(opts.external.is_empty());
    let Some(watch) = scenario.server.watch().filter(|_| wanted) else {
        return Ok(None);
    };
    let names: Vec<String> = servers
        .nodes
        .endpoints
        .nodes
        .iter()
        .map(|(n, _)| n.clone())
        .collect();
    let nodes: Vec<(String, std::net::SocketAddr)> = if opts.external.is_empty() {
        let running = servers.supervisor.lock().await.nodes();
        names
            .iter()
            .filter_map(|n| {
                let node = running
                    .iter()
                    .find(|r| &r.name == n && r.name != RESOURCE_NODE)?;
                Some((n.clone(), node.addr))
            })
            .collect()
    } else {
        names
            .into_iter()
            .zip(opts.external.iter().copied())
            .collect()
    };
    let log = Arc::new(ServerLog::create(
        &dir.join(SERVER_RECORD_FILE),
        recorder.clone(),
    )?);
    let watching = watch
        .start(WatchCtx {
            nodes,
            persistence: scenario.persistence,
            log: log.clone(),
            sentinels: servers.nodes.endpoints.sentinels.clone(),
        })
        .await
        .map_err(|e| {
            RunError::Watch(format!(
                "{e} (`[server] record = false` runs without the server record)"
            ))
        })?;
    Ok(Some((log, watching)))
}

/// CPU milliseconds used so far by each lock server node this run started (none for
/// external servers).
async fn server_cpu(
    supervisor: &Arc<Mutex<Supervisor>>,
) -> std::collections::BTreeMap<String, u64> {
    let nodes = supervisor.lock().await.nodes();
    nodes
        .into_iter()
        .filter(|n| n.name != RESOURCE_NODE)
        .filter_map(|n| Some((n.name, crate::processes::cpu::tree_cpu_ms(n.pid)?)))
        .collect()
}

/// How long the clients may take to open their first sessions before the workload starts
/// without the late ones (they join when they have one). An adapter that cannot start fails
/// sooner, after its own start time limit.
const START_LINE_LIMIT: Duration = Duration::from_secs(60);

/// The longest client pause the scenario can arm.
fn max_pause(scenario: &Scenario) -> Duration {
    let ms = scenario
        .nemesis
        .faults
        .iter()
        .filter_map(|f| f.spec.max_client_pause_ms())
        .max()
        .unwrap_or(0);
    Duration::from_millis(ms)
}

/// Reads the counter once more after everything stopped, as a fresh process, so lost updates
/// can be counted.
async fn final_read(recorder: &Recorder, resource: &Resource, process: u64) {
    let process = Process::Client(process);
    let note = Value {
        note: Some("final".to_owned()),
        ..Value::default()
    };
    recorder.record(
        process,
        EventKind::Invoke,
        F::Read,
        None,
        note.clone(),
        None,
    );
    // The counter workload runs on one lock (many are refused at load).
    let (kind, value, error) = match resource.read(0).await {
        crate::client::Outcome::Ok(n) => (
            EventKind::Ok,
            Value {
                int: Some(n),
                ..note
            },
            None,
        ),
        crate::client::Outcome::Fail(e) => (EventKind::Fail, note, Some(e)),
        crate::client::Outcome::Info(e) => (EventKind::Info, note, Some(e)),
    };
    recorder.record(process, kind, F::Read, None, value, error);
}

/// The comment a run's stored `scenario.toml` starts with when `--backend` (or `compare`)
/// ran it on another lock than the file names: the file is kept as written, so a reader must
/// learn from it what actually ran.
fn backend_note(swapped: &Swapped, ran: &Scenario) -> String {
    let (original, lock, skipped) = (&swapped.original, swapped.lock, &swapped.skipped);
    if lock.name == original.lock_name() && skipped.is_empty() && ran.nodes == original.nodes {
        return String::new();
    }
    let mut note = format!(
        "# lockpick ran this file with `--backend {}`, not as written: [server] kind = {:?}, \
         nodes = {}; [client] kind = {:?}",
        lock.name,
        ran.server.name(),
        ran.nodes,
        ran.client.kind.name()
    );
    if lock.name == original.lock_name() {
        note.push_str(" with the options below.\n");
    } else {
        note.push_str(" with its default options; no expected verdict.\n");
    }
    for f in skipped {
        note.push_str(&format!(
            "# [[nemesis]] entry {} was left out: {}\n",
            f.index + 1,
            f.reason
        ));
    }
    note.push_str("# Repeat the run with the command in results.json.\n");
    note
}
