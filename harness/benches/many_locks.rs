//! The many-locks workload at full speed: 64 clients over 256 locks on one redis-server, with
//! no hold and no think time, for a few seconds in each of four set-ups side by side — through
//! the embedded proxy or straight to the server, recording the history to a file or discarding
//! it — plus a sequential PING round trip through the proxy and straight, so the recording
//! overhead and the proxy's added latency read off one table. The set-ups take turns, round
//! after round, so a machine shared with other work slows them alike; the table gives the
//! median of the rounds and their range. Run with
//! `cargo bench -p lockpick-harness --bench many_locks [-- SECONDS [ROUNDS [CLIENTS [LOCKS]]]]`
//! (defaults 3, 5, 64, 256).

use lockpick_harness::backends::redis::RedisLock;
use lockpick_harness::backends::redis::RedisOptions;
use lockpick_harness::client::{Broken, ClientCtx, Clients, PausePoints, StartGate};
use lockpick_harness::processes::Supervisor;
use lockpick_harness::proxy::{EmbeddedToxiproxy, FaultProxies};
use lockpick_harness::recorder::Recorder;
use lockpick_harness::resource::Resource;
use lockpick_harness::scenario::{
    lock_names_of, MsRange, ResourceMode, WorkloadKind, WorkloadSpec,
};
use lockpick_harness::vocab::Discipline;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

struct Setup {
    name: &'static str,
    proxied: bool,
    recorded: bool,
}

struct Measured {
    ops: u64,
    secs: f64,
    /// Acquire latency p50 / p99 in ms, from the recorded history.
    acquire: Option<(f64, f64)>,
    history_bytes: u64,
}

/// Median and p99 of `v`.
fn quantiles(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (
        lockpick_reports::quantile(&v, 0.5),
        lockpick_reports::quantile(&v, 0.99),
    )
}

/// p50 and p99 acquire latencies (ms) of a recorded history.
fn acquire_latency(path: &Path) -> (f64, f64) {
    quantiles(lockpick_reports::acquire_latencies(path).expect("the history reads back"))
}

#[allow(clippy::too_many_arguments)]
async fn run_workload(
    lock_addr: SocketAddr,
    resource: &Resource,
    names: &[String],
    clients: usize,
    secs: u64,
    history: Option<&Path>,
    dir: &Path,
) -> Measured {
    let recorder = Arc::new(match history {
        Some(path) => Recorder::create(path).expect("history file"),
        None => Recorder::discarding(),
    });
    let lock: Box<dyn Clients> = Box::new(Arc::new(RedisLock::new(
        lock_addr,
        names,
        1000,
        250,
        MsRange { min: 1, max: 5 },
    )));
    let stop = CancellationToken::new();
    let interrupt = CancellationToken::new();
    let broken = Arc::new(Broken::default());
    let next_process = Arc::new(AtomicU64::new(clients as u64));
    let locks: Arc<[String]> = names.to_vec().into();
    let workload = WorkloadSpec {
        kind: WorkloadKind::FencedWrite,
        clients,
        duration_ms: secs * 1000,
        hold_ms: MsRange::fixed(0),
        think_ms: MsRange::fixed(0),
    };
    let ctx = |index: usize| ClientCtx {
        index,
        recorder: recorder.clone(),
        locks: locks.clone(),
        workload: workload.clone(),
        acquire_timeout: Duration::from_millis(2000),
        watchdog: false,
        discipline: Discipline::Careful,
        resource: resource.clone(),
        points: Arc::new(PausePoints::default()),
        next_process: next_process.clone(),
        seed: 1,
        stop: stop.clone(),
        interrupt: interrupt.clone(),
        broken: broken.clone(),
        run_dir: dir.to_owned(),
        // Built-in clients connect at once: each loop starts on its own.
        start: Arc::new(StartGate::opened()),
    };
    let mut tasks = JoinSet::new();
    lock.spawn(&mut tasks, clients, &ctx);
    let started = Instant::now();
    tokio::time::sleep(Duration::from_secs(secs)).await;
    let ops = recorder.completed_ops();
    let elapsed = started.elapsed().as_secs_f64();
    stop.cancel();
    while tasks.join_next().await.is_some() {}
    recorder.finish().expect("history flushed");
    let (acquire, history_bytes) = match history {
        Some(path) => (
            Some(acquire_latency(path)),
            std::fs::metadata(path).map_or(0, |m| m.len()),
        ),
        None => (None, 0),
    };
    Measured {
        ops,
        secs: elapsed,
        acquire,
        history_bytes,
    }
}

/// Empties the lock server.
async fn flush_all(addr: SocketAddr) {
    let client = redis::Client::open(format!("redis://{addr}/")).expect("redis url");
    let mut con = client
        .get_multiplexed_async_connection()
        .await
        .expect("connect");
    let _: String = redis::cmd("FLUSHALL")
        .query_async(&mut con)
        .await
        .expect("FLUSHALL");
}

/// Sequential PING round trips (ms): p50 and p99 of `n`.
async fn ping_rtt(addr: SocketAddr, n: usize) -> (f64, f64) {
    let client = redis::Client::open(format!("redis://{addr}/")).expect("redis url");
    let mut con = client
        .get_multiplexed_async_connection()
        .await
        .expect("connect");
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        let _: String = redis::cmd("PING")
            .query_async(&mut con)
            .await
            .expect("PING");
        v.push(t.elapsed().as_secs_f64() * 1e3);
    }
    quantiles(v)
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let secs = args.first().copied().unwrap_or(3);
    let rounds = args.get(1).copied().unwrap_or(5).max(1) as usize;
    let clients = args.get(2).copied().unwrap_or(64) as usize;
    let lock_count = args.get(3).copied().unwrap_or(256) as usize;
    let names = lock_names_of("lock", lock_count);
    let dir = tempfile::tempdir().expect("temp dir");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut supervisor = Supervisor::new(dir.path());
        let node = supervisor
            .start_redis("n1", RedisOptions::default())
            .await
            .expect("start redis-server n1");
        let resource_node = supervisor
            .start_redis("resource", RedisOptions::default())
            .await
            .expect("start the resource's redis-server");
        let embedded = EmbeddedToxiproxy::start(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .expect("start the embedded toxiproxy");
        let proxies = FaultProxies::new(embedded.api_addr()).expect("proxy client");
        let proxied = proxies.create("n1", node.addr).await.expect("proxy n1");
        let resource = Resource::connect(
            resource_node.addr,
            ResourceMode::Naive,
            Duration::from_secs(2),
        )
        .await
        .expect("connect the resource")
        .with_locks(&names);

        let ping_direct = ping_rtt(node.addr, 2000).await;
        let ping_proxied = ping_rtt(proxied, 2000).await;

        let setups = [
            Setup { name: "proxy, history to file", proxied: true, recorded: true },
            Setup { name: "proxy, history discarded", proxied: true, recorded: false },
            Setup { name: "direct, history to file", proxied: false, recorded: true },
            Setup { name: "direct, history discarded", proxied: false, recorded: false },
        ];
        println!(
            "many locks: {clients} clients over {lock_count} locks on one redis-server, fenced-write, hold 0, think 0; {rounds} rounds of {secs} s per set-up, taking turns"
        );
        let mut results: Vec<Vec<Measured>> = setups.iter().map(|_| Vec::new()).collect();
        for _ in 0..rounds {
            for (i, s) in setups.iter().enumerate() {
                // Locks the last set-up's clients held when they were stopped would block
                // this one for a TTL.
                flush_all(node.addr).await;
                resource.clear().await.expect("clear the resource");
                let path = dir.path().join(format!("history-{i}.jsonl"));
                let m = run_workload(
                    if s.proxied { proxied } else { node.addr },
                    &resource,
                    &names,
                    clients,
                    secs,
                    s.recorded.then_some(path.as_path()),
                    dir.path(),
                )
                .await;
                let _ = std::fs::remove_file(&path);
                results[i].push(m);
            }
        }
        println!(
            "{:<28} {:>14} {:>20} {:>22} {:>12}",
            "set-up", "ops/s median", "ops/s min - max", "acquire p50/p99 (med)", "history/s"
        );
        for (s, runs) in setups.iter().zip(&results) {
            let mut rates: Vec<f64> = runs.iter().map(|m| m.ops as f64 / m.secs).collect();
            rates.sort_by(f64::total_cmp);
            let median = rates[rates.len() / 2];
            let acquire = runs
                .iter()
                .filter_map(|m| m.acquire)
                .collect::<Vec<_>>();
            let acquire = if acquire.is_empty() {
                "-".to_owned()
            } else {
                let (p50, p99) = (
                    quantiles(acquire.iter().map(|a| a.0).collect()).0,
                    quantiles(acquire.iter().map(|a| a.1).collect()).0,
                );
                format!("{p50:.2} / {p99:.2} ms")
            };
            let bytes: f64 = runs
                .iter()
                .map(|m| m.history_bytes as f64 / m.secs)
                .sum::<f64>()
                / runs.len() as f64;
            println!(
                "{:<28} {:>14.0} {:>20} {:>22} {:>12}",
                s.name,
                median,
                format!("{:.0} - {:.0}", rates[0], rates[rates.len() - 1]),
                acquire,
                if s.recorded {
                    format!("{:.1} MB", bytes / 1e6)
                } else {
                    "-".to_owned()
                },
            );
        }
        println!(
            "PING round trip, sequential, 2000 each: direct p50 {:.3} ms p99 {:.3} ms; through the proxy p50 {:.3} ms p99 {:.3} ms (added p50 {:.3} ms)",
            ping_direct.0,
            ping_direct.1,
            ping_proxied.0,
            ping_proxied.1,
            ping_proxied.0 - ping_direct.0
        );
        let _ = proxies.delete("n1").await;
        embedded.shutdown().await;
        supervisor.stop_all().await;
    });
}
