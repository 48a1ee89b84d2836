//! Times a PostgreSQL node's start under the supervisor, 20 times: `initdb` + `postgres` until
//! it answers `SELECT 1` (a fresh node), and `postgres` alone (a restart of the same node); and
//! its memory once started with one client connected: RSS summed over the postmaster and its
//! workers, and PSS (shared pages split between them). Run with
//! `cargo bench -p lockpick-harness --bench pg_start`.

use lockpick_harness::backends::postgres::PgOptions;
use lockpick_harness::backends::postgres::{PgLeaseRowLock, PgNode, PgSettings};
use lockpick_harness::client::LockClient;
use lockpick_harness::processes::{NodeKind, Supervisor};
use lockpick_harness::scenario::MsRange;
use std::time::Instant;

const ROUNDS: usize = 20;

fn summary(name: &str, unit: &str, mut v: Vec<f64>) {
    v.sort_by(f64::total_cmp);
    println!(
        "{name:<22} n={:<3} min {:>8.1} {unit}  median {:>8.1} {unit}  max {:>8.1} {unit}",
        v.len(),
        v[0],
        v[v.len() / 2],
        v[v.len() - 1],
    );
}

/// `pid` and every process below it (unshare, postgres, its helpers and backends).
fn tree(pid: u32) -> Vec<u32> {
    let mut out = vec![pid];
    out.extend(lockpick_harness::processes::descendants(pid));
    out
}

/// A `kB` field of /proc/<pid>/smaps_rollup, in MiB.
fn rollup_mib(pid: u32, field: &str) -> f64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    text.lines()
        .find_map(|line| {
            let rest = line.strip_prefix(field)?.strip_prefix(':')?;
            rest.split_whitespace().next()?.parse::<f64>().ok()
        })
        .unwrap_or(0.0)
        / 1024.0
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let run = tempfile::tempdir().expect("temp dir");
    let (mut fresh, mut restart, mut rss, mut pss, mut procs) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    rt.block_on(async {
        for round in 0..ROUNDS {
            let mut sup = Supervisor::new(run.path());
            let name = format!("pg{round}");
            let started = Instant::now();
            let node = sup
                .start(&name, NodeKind::from(PgOptions::default()))
                .await
                .expect("start postgres");
            fresh.push(started.elapsed().as_secs_f64() * 1e3);
            // One client connected (its backend counted), the schema made.
            let server = PgNode::new(
                node.addr,
                "lock",
                5000,
                MsRange::fixed(10),
                &PgSettings::default(),
            );
            let lock = PgLeaseRowLock::new(std::sync::Arc::new(server), 1000);
            let session = lock.connect(1).await.expect("connect");
            let pids = tree(node.pid);
            procs.push(pids.len() as f64);
            rss.push(pids.iter().map(|p| rollup_mib(*p, "Rss")).sum());
            pss.push(pids.iter().map(|p| rollup_mib(*p, "Pss")).sum());
            drop(session);
            let again = sup.restart(&name).await.expect("restart postgres");
            restart.push(again.startup.as_secs_f64() * 1e3);
        }
    });
    summary("initdb + start", "ms", fresh);
    summary("restart (postgres)", "ms", restart);
    summary("processes", "", procs);
    summary("RSS, all processes", "MiB", rss);
    summary("PSS, all processes", "MiB", pss);
}
