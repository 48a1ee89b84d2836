//! Times a PostgreSQL primary + streaming replica under the supervisor, 10 times: the primary's
//! `initdb` + start, the replica's `pg_basebackup` + start until it answers `SELECT 1`, the
//! time until the primary reports it streaming, and the promotion (`pg_promote`, as the
//! failover fault runs it). The replica copies from the primary directly here; in a run it
//! goes through the replication-link proxy. Run with
//! `cargo bench --profile dev -p lockpick-harness --bench pg_replica_start`.

use lockpick_harness::backends::postgres::{replicas_streaming, PgOptions};
use lockpick_harness::processes::{NodeKind, Supervisor};
use std::time::{Duration, Instant};

const ROUNDS: usize = 10;

fn summary(name: &str, mut v: Vec<f64>) {
    v.sort_by(f64::total_cmp);
    println!(
        "{name:<30} n={:<3} min {:>7.0} ms  median {:>7.0} ms  max {:>7.0} ms",
        v.len(),
        v[0],
        v[v.len() / 2],
        v[v.len() - 1],
    );
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let run = tempfile::tempdir().expect("temp dir");
    let (mut primary, mut replica, mut streaming, mut pair, mut promote) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    rt.block_on(async {
        for round in 0..ROUNDS {
            let mut sup = Supervisor::new(run.path());
            let started = Instant::now();
            let p = sup
                .start(&format!("p{round}"), NodeKind::from(PgOptions::default()))
                .await
                .expect("start the primary");
            primary.push(ms(started));
            let copy = Instant::now();
            let options = PgOptions {
                replica_of: Some(p.addr),
                ..PgOptions::default()
            };
            let name = format!("r{round}");
            sup.start(&name, NodeKind::from(options))
                .await
                .expect("start the replica");
            replica.push(ms(copy));
            while replicas_streaming(p.addr, false).await < 1 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            streaming.push(ms(copy));
            pair.push(ms(started));
            let promoting = Instant::now();
            sup.promote(&name).await.expect("promote");
            promote.push(ms(promoting));
        }
    });
    summary("primary: initdb + start", primary);
    summary("replica: basebackup + start", replica);
    summary("replica: until streaming", streaming);
    summary("primary + streaming replica", pair);
    summary("promotion (pg_promote)", promote);
}
