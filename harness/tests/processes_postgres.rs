//! Supervisor tests against a real PostgreSQL (Debian `postgresql`): initdb and start, pause
//! (backends included), kill and restart keeping the data, no process or shared-memory
//! segment left behind on drop or when lockpick is SIGKILLed, and `now()` under libfaketime.

mod processes_support;

use std::net::SocketAddr;
use std::time::Duration;

use lockpick_harness::backends::postgres::{pg_ready, PgOptions, PG_DATABASE, PG_USER};
use lockpick_harness::processes::{faketime, NodeKind, NodeState, Supervisor};
use processes_support::{
    is_running, kill_helper_and_list_survivors, proc_state, spawn_helper, wait_not_running,
};

const LONG: Duration = Duration::from_secs(5);
const HELPER_ENV: &str = "LOCKPICK_DB_POSTGRES_HELPER_DIR";

async fn connect(addr: SocketAddr) -> tokio_postgres::Client {
    let mut config = tokio_postgres::Config::new();
    config
        .host(addr.ip().to_string())
        .port(addr.port())
        .user(PG_USER)
        .dbname(PG_DATABASE)
        .connect_timeout(LONG);
    let (client, connection) = config.connect(tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    client
}

/// The pids below `pid` (postgres, its backends and helpers), from /proc.
fn workers(pid: u32) -> Vec<u32> {
    lockpick_harness::processes::descendants(pid)
}

/// The System V segment id postgres recorded in its pid file.
fn shmem_id(dir: &std::path::Path) -> i32 {
    let text = std::fs::read_to_string(dir.join("data/postmaster.pid")).unwrap();
    text.lines()
        .nth(6)
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap()
}

fn segment_exists(id: i32) -> bool {
    // SAFETY: IPC_STAT writes into a valid, zeroed shmid_ds.
    let mut ds: libc::shmid_ds = unsafe { std::mem::zeroed() };
    unsafe { libc::shmctl(id, libc::IPC_STAT, &mut ds) == 0 }
}

#[tokio::test]
async fn durable_server_keeps_committed_rows_across_kill_and_restart() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    // With synchronous_commit off (the default here) a commit acknowledged just before the
    // SIGKILL is lost: measured, the row below is gone after the restart.
    let durable = PgOptions {
        fsync: true,
        synchronous_commit: true,
        ..PgOptions::default()
    };
    let node = sup.start("pg", NodeKind::from(durable)).await.unwrap();
    assert!(node.addr.ip().is_loopback());
    assert_eq!(node.state, NodeState::Running);
    for file in [
        "postgresql.conf",
        "data/PG_VERSION",
        "initdb.log",
        "console.log",
    ] {
        assert!(node.dir.join(file).exists(), "no {file}");
    }
    let conf = std::fs::read_to_string(node.dir.join("postgresql.conf")).unwrap();
    assert!(
        conf.contains(&format!("port = '{}'", node.addr.port())),
        "{conf}"
    );
    assert!(conf.contains("fsync = 'on'"), "{conf}");
    assert!(conf.contains("synchronous_commit = 'on'"), "{conf}");
    let client = connect(node.addr).await;
    client
        .batch_execute("CREATE TABLE t (v int); INSERT INTO t VALUES (7)")
        .await
        .unwrap();
    let before = workers(node.pid);
    assert!(!before.is_empty(), "postgres forked no workers?");

    sup.kill("pg").await.unwrap();
    assert_eq!(proc_state(node.pid), None, "killed postmaster not reaped");
    for pid in &before {
        assert!(
            wait_not_running(*pid, LONG),
            "worker {pid} outlived the kill"
        );
    }
    let after = sup.restart("pg").await.unwrap();
    assert_eq!(after.addr, node.addr);
    let client = connect(after.addr).await;
    let row = client.query_one("SELECT v FROM t", &[]).await.unwrap();
    assert_eq!(
        row.get::<_, i32>(0),
        7,
        "committed row lost across a restart"
    );
    println!(
        "initdb+start {:?}, restart {:?}",
        node.startup, after.startup
    );
}

#[tokio::test]
async fn pause_freezes_the_backends_too_and_resume_thaws_them() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let node = sup
        .start("pg", NodeKind::from(PgOptions::default()))
        .await
        .unwrap();
    // A connection made before the pause has its own backend: it must stop answering too.
    let client = connect(node.addr).await;
    sup.pause("pg").unwrap();
    assert_eq!(proc_state(node.pid), Some('T'));
    for pid in workers(node.pid) {
        // The signal is sent before pause returns; delivery to a running worker is
        // asynchronous. A worker that was exiting (the readiness probe's backend) is a zombie.
        let mut state = proc_state(pid);
        for _ in 0..100 {
            if matches!(state, Some('T' | 'Z') | None) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
            state = proc_state(pid);
        }
        assert!(
            matches!(state, Some('T' | 'Z') | None),
            "worker {pid} still runs ({state:?})"
        );
    }
    let query = tokio::time::timeout(Duration::from_millis(500), client.simple_query("SELECT 1"));
    assert!(query.await.is_err(), "a paused server answered");
    assert!(!pg_ready(node.addr, Duration::from_millis(300)).await);
    sup.resume("pg").unwrap();
    client.simple_query("SELECT 1").await.unwrap();
}

#[tokio::test]
async fn drop_leaves_no_process_and_no_shared_memory() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let node = sup
        .start("pg", NodeKind::from(PgOptions::default()))
        .await
        .unwrap();
    let _client = connect(node.addr).await;
    let segment = shmem_id(&node.dir);
    let mut pids = workers(node.pid);
    pids.push(node.pid);
    sup.pause("pg").unwrap(); // a paused server must not survive either
    drop(sup);
    for pid in pids {
        assert!(wait_not_running(pid, LONG), "{pid} outlived the supervisor");
    }
    assert!(
        !segment_exists(segment),
        "System V segment {segment} leaked"
    );
}

#[tokio::test]
async fn now_follows_the_faketime_control_file() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let opts = PgOptions {
        faketime: true,
        ..PgOptions::default()
    };
    let node = sup.start("pg", NodeKind::from(opts)).await.unwrap();
    let client = connect(node.addr).await;
    let skew = |client: tokio_postgres::Client| async move {
        let row = client
            .query_one(
                "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint",
                &[],
            )
            .await
            .unwrap();
        let server: i64 = row.get(0);
        let local = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        (server - local, client)
    };
    let (real, client) = skew(client).await;
    assert!(real.abs() < 2_000, "clock off by {real} ms before any jump");
    faketime::set_clock(
        &faketime::control_file(&node.dir),
        faketime::ClockSetting {
            offset_ms: 3_600_000,
            rate_milli: None,
        },
    )
    .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (jumped, _) = skew(client).await;
    assert!(
        (3_598_000..3_602_000).contains(&jumped),
        "now() is {jumped} ms off after a one-hour jump"
    );
}

/// Not a test by itself: the child process of `postgres_dies_when_lockpick_is_sigkilled`.
#[test]
#[ignore = "helper process, run by postgres_dies_when_lockpick_is_sigkilled"]
fn helper_holds_postgres_until_killed() {
    let Some(dir) = std::env::var_os(HELPER_ENV) else {
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut sup = Supervisor::new(std::path::Path::new(&dir));
    let node = runtime
        .block_on(sup.start("pg", NodeKind::from(PgOptions::default())))
        .unwrap();
    let client = runtime.block_on(connect(node.addr));
    let mut pids = workers(node.pid);
    pids.push(node.pid);
    let list: Vec<String> = pids.iter().map(u32::to_string).collect();
    println!("PG_PIDS {}", list.join(","));
    std::thread::sleep(Duration::from_secs(60));
    drop(client);
    drop(sup);
}

#[test]
fn postgres_dies_when_lockpick_is_sigkilled() {
    let run = tempfile::tempdir().unwrap();
    let env = [(HELPER_ENV, run.path().as_os_str())];
    let (helper, pids) = spawn_helper("helper_holds_postgres_until_killed", &env, "PG_PIDS");
    // The server itself (listed last) must be up; a worker of the list may end on its own
    // before the kill (a CI run saw one), which says nothing about what the kill does.
    let server = *pids.last().expect("the server's pid is listed");
    let alive_before_kill = is_running(server);
    let survivors = kill_helper_and_list_survivors(helper, &pids, LONG);
    assert!(
        alive_before_kill,
        "postgres died before lockpick was killed"
    );
    assert!(
        survivors.is_empty(),
        "{survivors:?} outlived a SIGKILLed lockpick"
    );
}

#[tokio::test]
async fn an_immediate_restart_waits_for_the_killed_workers() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    sup.start("pg", NodeKind::from(PgOptions::default()))
        .await
        .unwrap();
    // Restarting at once used to fail: the killed workers were still attached to the old
    // shared-memory segment when the new postmaster looked.
    for _ in 0..3 {
        let again = sup.restart("pg").await.unwrap();
        let _client = connect(again.addr).await;
    }
}

#[tokio::test]
async fn a_missing_postgres_names_its_package() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let opts = PgOptions {
        binary: "/nonexistent/bin/postgres".into(),
        ..PgOptions::default()
    };
    let err = sup.start("pg", NodeKind::from(opts)).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("install the Debian package `postgresql`"),
        "{err}"
    );
}

#[tokio::test]
async fn a_replica_copies_and_streams_the_primary_takes_writes_once_promoted_and_leaves_nothing() {
    use lockpick_harness::backends::postgres::replicas_streaming;
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let primary = sup
        .start("n1", NodeKind::from(PgOptions::default()))
        .await
        .unwrap();
    let p = connect(primary.addr).await;
    p.batch_execute("CREATE TABLE t (v int); INSERT INTO t VALUES (1)")
        .await
        .unwrap();
    let options = PgOptions {
        replica_of: Some(primary.addr),
        ..PgOptions::default()
    };
    let replica = sup.start("n2", NodeKind::from(options)).await.unwrap();
    assert!(replica.dir.join("data/standby.signal").is_file());
    assert!(
        tokio::time::timeout(Duration::from_secs(30), async {
            while replicas_streaming(primary.addr, false).await < 1 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .is_ok(),
        "the replica never streamed"
    );
    // A commit after the copy reaches the replica over the stream.
    p.batch_execute("INSERT INTO t VALUES (2)").await.unwrap();
    let r = connect(replica.addr).await;
    let count = || async {
        let row = r.query_one("SELECT count(*) FROM t", &[]).await.unwrap();
        row.get::<_, i64>(0)
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while count().await < 2 {
        assert!(std::time::Instant::now() < deadline, "row 2 never arrived");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let refused = r
        .batch_execute("INSERT INTO t VALUES (3)")
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("read-only") || format!("{refused:?}").contains("read-only"),
        "{refused:?}"
    );

    sup.kill("n1").await.unwrap();
    assert_eq!(sup.promote("n2").await.unwrap(), replica.addr);
    r.batch_execute("INSERT INTO t VALUES (3)").await.unwrap();
    assert_eq!(count().await, 3);

    let mut pids = workers(replica.pid);
    pids.push(replica.pid);
    sup.pause("n2").unwrap(); // a paused replica must not survive either
    drop(sup);
    for pid in pids {
        assert!(wait_not_running(pid, LONG), "{pid} outlived the supervisor");
    }
}
