//! Clock faults for real: redis-server under libfaketime (behind the allocator shim), its wall
//! clock moved at runtime through its control file.

mod processes_support;

use lockpick_harness::backends::redis::RedisOptions;
use lockpick_harness::processes::faketime::{control_file, set_clock, ClockSetting};
use lockpick_harness::processes::Supervisor;
use processes_support::command;
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(2);

fn faketime() -> RedisOptions {
    RedisOptions {
        faketime: true,
        ..RedisOptions::default()
    }
}

fn shm_files_of(pid: u32) -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.contains("faketime") && n.ends_with(&format!("_{pid}")))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn clock_jump_on_one_node_expires_its_key_while_the_others_keep_theirs() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let mut nodes = Vec::new();
    for name in ["n1", "n2", "n3"] {
        nodes.push(sup.start_redis(name, faketime()).await.unwrap());
    }
    for n in &nodes {
        let reply = command(n.addr, &["SET", "k", "v", "PX", "30000"], T).unwrap();
        assert!(reply.starts_with("+OK"), "{reply}");
    }
    set_clock(
        &control_file(&nodes[1].dir),
        ClockSetting {
            offset_ms: 60_000,
            rate_milli: None,
        },
    )
    .unwrap();
    // libfaketime rereads the file on every call; allow it a few of redis's cron ticks.
    let deadline = Instant::now() + T;
    while command(nodes[1].addr, &["GET", "k"], T).unwrap() != "$-1\r\n" {
        assert!(Instant::now() < deadline, "n2's key never expired");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        command(nodes[0].addr, &["GET", "k"], T).unwrap(),
        "$1\r\nv\r\n"
    );
    assert_eq!(
        command(nodes[2].addr, &["GET", "k"], T).unwrap(),
        "$1\r\nv\r\n"
    );
    // n2's clock is a minute ahead; the others still see about 30 s left.
    let pttl = command(nodes[0].addr, &["PTTL", "k"], T).unwrap();
    let left: i64 = pttl.trim_start_matches(':').trim().parse().unwrap();
    assert!(left > 25_000, "{pttl}");
    drop(sup);
}

#[tokio::test]
async fn fast_clock_expires_a_key_early() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let node = sup.start_redis("n1", faketime()).await.unwrap();
    set_clock(
        &control_file(&node.dir),
        ClockSetting {
            offset_ms: 0,
            rate_milli: Some(10_000),
        },
    )
    .unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    command(node.addr, &["SET", "k", "v", "PX", "5000"], T).unwrap();
    let set = Instant::now();
    while command(node.addr, &["GET", "k"], T).unwrap() != "$-1\r\n" {
        assert!(
            set.elapsed() < Duration::from_secs(3),
            "x10 clock: 5 s key still there"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        set.elapsed() < Duration::from_millis(1500),
        "{:?}",
        set.elapsed()
    );
    drop(sup);
}

#[tokio::test]
async fn faketime_node_leaves_no_shm_files_even_when_killed() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let node = sup.start_redis("n1", faketime()).await.unwrap();
    // libfaketime made its files at start; the preloaded shim removed their names at once.
    assert_eq!(shm_files_of(node.pid), Vec::<String>::new());
    sup.kill("n1").await.unwrap();
    assert_eq!(
        shm_files_of(node.pid),
        Vec::<String>::new(),
        "SIGKILL left libfaketime files in /dev/shm"
    );
}
