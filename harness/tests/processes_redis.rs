//! Supervisor tests against the real `redis-server`: start, pause/resume, kill/restart with
//! and without AOF, crash detection, cleanup on drop and the missing-binary error.

mod processes_support;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::Duration;

use lockpick_harness::backends::redis::RedisOptions;
use lockpick_harness::processes::{NodeState, ProcessError, Supervisor};
use processes_support::{command, pings, proc_state, wait_not_running};

const SHORT: Duration = Duration::from_millis(300);
const LONG: Duration = Duration::from_secs(2);

fn aof() -> RedisOptions {
    RedisOptions {
        aof: true,
        ..RedisOptions::default()
    }
}

#[tokio::test]
async fn two_nodes_answer_ping_and_have_their_folders() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let a = sup
        .start_redis("r1", RedisOptions::default())
        .await
        .unwrap();
    let b = sup
        .start_redis("r2", RedisOptions::default())
        .await
        .unwrap();
    assert_ne!(a.addr, b.addr);
    assert_ne!(a.pid, b.pid);
    for node in [&a, &b] {
        assert!(node.addr.ip().is_loopback());
        assert!(pings(node.addr, LONG), "{} does not answer PING", node.name);
        assert_eq!(node.state, NodeState::Running);
        assert_eq!(node.dir, run.path().join("nodes").join(&node.name));
        for file in ["redis.conf", "server.log", "data"] {
            assert!(node.dir.join(file).exists(), "{} lacks {file}", node.name);
        }
        let conf = std::fs::read_to_string(node.dir.join("redis.conf")).unwrap();
        assert!(conf.contains(&format!("port {}", node.addr.port())));
        assert!(conf.contains("bind 127.0.0.1"));
        assert!(conf.contains("save \"\""));
        println!("{} ready after {:?}", node.name, node.startup);
    }
    assert_eq!(sup.node("r1").unwrap().pid, a.pid);
    assert!(sup.node("nope").is_none());
    assert_eq!(sup.nodes().len(), 2);
}

#[tokio::test]
async fn pause_makes_ping_time_out_and_resume_makes_it_answer() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let node = sup.start_redis("r", RedisOptions::default()).await.unwrap();
    sup.pause("r").unwrap();
    assert_eq!(sup.node("r").unwrap().state, NodeState::Paused);
    assert_eq!(proc_state(node.pid), Some('T'));
    let err = command(node.addr, &["PING"], SHORT).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
        "paused node gave {err:?} instead of a timeout"
    );
    sup.resume("r").unwrap();
    assert_eq!(sup.node("r").unwrap().state, NodeState::Running);
    assert!(pings(node.addr, LONG));
}

#[tokio::test]
async fn aof_key_survives_kill_and_restart_on_the_same_port() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let before = sup.start_redis("r", aof()).await.unwrap();
    let reply = command(before.addr, &["SET", "lock", "owner-7"], LONG).unwrap();
    assert_eq!(reply, "+OK\r\n");
    sup.kill("r").await.unwrap();
    assert_eq!(sup.node("r").unwrap().state, NodeState::Killed);
    assert_eq!(proc_state(before.pid), None, "killed node not reaped");
    assert!(!pings(before.addr, SHORT));

    let after = sup.restart("r").await.unwrap();
    assert_eq!(after.addr, before.addr);
    assert_ne!(after.pid, before.pid);
    assert_eq!(after.state, NodeState::Running);
    let reply = command(after.addr, &["GET", "lock"], LONG).unwrap();
    assert_eq!(reply, "$7\r\nowner-7\r\n");
    println!("restart with AOF ready after {:?}", after.startup);
}

#[tokio::test]
async fn without_aof_a_restart_loses_the_data() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let node = sup.start_redis("r", RedisOptions::default()).await.unwrap();
    assert_eq!(
        command(node.addr, &["SET", "lock", "x"], LONG).unwrap(),
        "+OK\r\n"
    );
    // Restart kills a running node itself.
    let after = sup.restart("r").await.unwrap();
    assert_eq!(after.addr, node.addr);
    assert_eq!(proc_state(node.pid), None);
    assert_eq!(
        command(after.addr, &["GET", "lock"], LONG).unwrap(),
        "$-1\r\n"
    );
}

#[tokio::test]
async fn a_paused_node_can_be_killed_and_restarted() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let node = sup.start_redis("r", RedisOptions::default()).await.unwrap();
    sup.pause("r").unwrap();
    tokio::time::timeout(LONG, sup.kill("r"))
        .await
        .expect("kill of a paused node hangs")
        .unwrap();
    assert_eq!(proc_state(node.pid), None);
    assert!(matches!(
        sup.pause("r"),
        Err(ProcessError::NotRunning { .. })
    ));
    let after = sup.restart("r").await.unwrap();
    assert!(pings(after.addr, LONG));
}

#[tokio::test]
async fn an_external_kill_shows_as_a_crash() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let node = sup.start_redis("r", RedisOptions::default()).await.unwrap();
    // SAFETY: plain kill(2) of our own child.
    assert_eq!(unsafe { libc::kill(node.pid as i32, libc::SIGKILL) }, 0);
    let mut state = sup.node("r").unwrap().state;
    for _ in 0..200 {
        if state != NodeState::Running {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        state = sup.node("r").unwrap().state;
    }
    assert_eq!(state, NodeState::Crashed("signal 9".into()));
    assert_eq!(proc_state(node.pid), None, "crashed node not reaped");
    let after = sup.restart("r").await.unwrap();
    assert_eq!(after.state, NodeState::Running);
}

#[tokio::test]
async fn extra_config_lines_reach_the_server() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let opts = RedisOptions {
        extra_config: vec![("maxmemory".into(), "12345678".into())],
        ..RedisOptions::default()
    };
    let node = sup.start_redis("r", opts).await.unwrap();
    let reply = command(node.addr, &["CONFIG", "GET", "maxmemory"], LONG).unwrap();
    assert!(reply.contains("12345678"), "CONFIG GET gave {reply:?}");
}

#[tokio::test]
async fn dropping_the_supervisor_kills_and_reaps_every_node() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let a = sup.start_redis("a", RedisOptions::default()).await.unwrap();
    let b = sup.start_redis("b", aof()).await.unwrap();
    sup.pause("b").unwrap();
    drop(sup);
    // Drop waits for the reaper, so the pids are gone at once: not running, not zombies.
    assert_eq!(proc_state(a.pid), None);
    assert_eq!(proc_state(b.pid), None);
}

#[tokio::test]
async fn a_panic_with_a_supervisor_alive_kills_its_nodes() {
    let run = tempfile::tempdir().unwrap();
    let dir = run.path().to_path_buf();
    let (tx, rx) = std::sync::mpsc::channel();
    let task = tokio::spawn(async move {
        let mut sup = Supervisor::new(&dir);
        let node = sup.start_redis("r", RedisOptions::default()).await.unwrap();
        tx.send(node.pid).unwrap();
        panic!("test panic while the node runs");
    });
    assert!(task.await.unwrap_err().is_panic());
    let pid = rx.recv().unwrap();
    assert_eq!(proc_state(pid), None);
}

#[tokio::test]
async fn stop_all_kills_every_node_and_keeps_them_restartable() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let a = sup.start_redis("a", RedisOptions::default()).await.unwrap();
    let b = sup.start_redis("b", RedisOptions::default()).await.unwrap();
    sup.stop_all().await;
    for node in [&a, &b] {
        assert_eq!(proc_state(node.pid), None);
        assert_eq!(sup.node(&node.name).unwrap().state, NodeState::Killed);
    }
    let again = sup.restart("a").await.unwrap();
    assert_eq!(again.addr, a.addr);
}

#[tokio::test]
async fn a_missing_binary_names_the_debian_package() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let opts = RedisOptions {
        binary: PathBuf::from("/nonexistent/redis-server"),
        ..RedisOptions::default()
    };
    let err = sup.start_redis("r", opts).await.unwrap_err();
    assert!(
        matches!(
            err,
            ProcessError::MissingBinary {
                package: "redis-server",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("`redis-server`"), "{err}");
    assert!(!run.path().join("nodes").join("r").exists());
    assert!(sup.node("r").is_none());
}

#[tokio::test]
async fn names_and_duplicates_are_rejected() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    for bad in ["", "..", "a/b", "a b"] {
        let err = sup.start_redis(bad, RedisOptions::default()).await;
        assert!(
            matches!(err, Err(ProcessError::InvalidName { .. })),
            "{bad:?}"
        );
    }
    sup.start_redis("r", RedisOptions::default()).await.unwrap();
    let err = sup.start_redis("r", RedisOptions::default()).await;
    assert!(matches!(err, Err(ProcessError::DuplicateNode { .. })));
    let opts = RedisOptions {
        extra_config: vec![("maxmemory".into(), "1\nport 1".into())],
        ..RedisOptions::default()
    };
    let err = sup.start_redis("r2", opts).await;
    assert!(
        matches!(err, Err(ProcessError::InvalidOptions { .. })),
        "{err:?}"
    );
    assert!(matches!(
        sup.pause("other"),
        Err(ProcessError::UnknownNode { .. })
    ));
}

/// A fake server binary (a shell script) standing in for redis-server.
fn fake_binary(dir: &std::path::Path, body: &str) -> PathBuf {
    let path = dir.join("fake-server");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[tokio::test]
async fn a_server_that_exits_at_start_reports_its_output() {
    let run = tempfile::tempdir().unwrap();
    let bin = fake_binary(run.path(), "echo 'fatal: cannot start' >&2; exit 3");
    let mut sup = Supervisor::new(run.path());
    let opts = RedisOptions {
        binary: bin,
        ..RedisOptions::default()
    };
    let err = sup.start_redis("r", opts).await.unwrap_err();
    let ProcessError::ExitedEarly {
        status, log_tail, ..
    } = &err
    else {
        panic!("expected ExitedEarly, got {err:?}");
    };
    assert_eq!(status, "exit code 3");
    assert!(log_tail.contains("fatal: cannot start"), "{log_tail}");
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_with_its_log_and_is_killed() {
    let run = tempfile::tempdir().unwrap();
    let pid_file = run.path().join("fake.pid");
    let body = format!(
        "echo $$ > {}; echo 'still booting'; exec sleep 30",
        pid_file.display()
    );
    let bin = fake_binary(run.path(), &body);
    let mut sup = Supervisor::new(run.path());
    let opts = RedisOptions {
        binary: bin,
        ready_timeout: Duration::from_millis(300),
        ..RedisOptions::default()
    };
    let err = sup.start_redis("r", opts).await.unwrap_err();
    let ProcessError::NotReady { log_tail, .. } = &err else {
        panic!("expected NotReady, got {err:?}");
    };
    assert!(log_tail.contains("still booting"), "{log_tail}");
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(wait_not_running(pid, LONG));
    assert_eq!(proc_state(pid), None, "timed-out server not reaped");
}

#[tokio::test]
async fn a_start_that_finds_its_port_taken_is_retried() {
    let run = tempfile::tempdir().unwrap();
    let marker = run.path().join("failed-once");
    // Fails like redis-server does when the port was grabbed between choice and bind, once.
    let body = format!(
        "if [ ! -e {m} ]; then touch {m}; echo '# Warning: Could not create server TCP listening \
         socket 127.0.0.1:1: bind: Address already in use'; exit 1; fi\nexec redis-server \"$@\"",
        m = marker.display()
    );
    let bin = fake_binary(run.path(), &body);
    let mut sup = Supervisor::new(run.path());
    let opts = RedisOptions {
        binary: bin,
        ..RedisOptions::default()
    };
    let node = sup.start_redis("r", opts).await.unwrap();
    assert!(marker.exists(), "the first attempt did not run");
    assert!(pings(node.addr, LONG));
}

#[tokio::test]
async fn a_killed_node_s_port_is_held_by_lockpick_until_its_restart() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let node = sup.start_redis("r", RedisOptions::default()).await.unwrap();
    sup.kill("r").await.unwrap();
    // Another process cannot take it while the node is down, and a client is refused as by
    // any node that is down.
    assert!(std::net::TcpListener::bind(node.addr).is_err());
    let refused = std::net::TcpStream::connect(node.addr).unwrap_err();
    assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);
    let after = sup.restart("r").await.unwrap();
    assert_eq!(after.addr, node.addr);
}

#[tokio::test]
async fn a_restart_keeps_its_port_and_reports_when_it_is_taken() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let node = sup.start_redis("r", RedisOptions::default()).await.unwrap();
    // A crash (not our kill): nothing holds the port while the node is down.
    // SAFETY: plain kill(2) of our own child.
    assert_eq!(unsafe { libc::kill(node.pid as i32, libc::SIGKILL) }, 0);
    while sup.node("r").unwrap().state == NodeState::Running {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let squatter = std::net::TcpListener::bind(node.addr).unwrap();
    let err = sup.restart("r").await.unwrap_err();
    let ProcessError::ExitedEarly { addr, log_tail, .. } = &err else {
        panic!("expected ExitedEarly, got {err:?}");
    };
    assert_eq!(addr, &node.addr.to_string());
    assert!(log_tail.contains("Address already in use"), "{log_tail}");
    drop(squatter);
    let after = sup.restart("r").await.unwrap();
    assert_eq!(after.addr, node.addr);
}

#[tokio::test]
async fn a_master_leads_and_its_replica_does_not() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let master = sup.start_redis("m", RedisOptions::default()).await.unwrap();
    let follows = RedisOptions {
        extra_config: vec![(
            "replicaof".into(),
            format!("{} {}", master.addr.ip(), master.addr.port()),
        )],
        ..RedisOptions::default()
    };
    sup.start_redis("r", follows).await.unwrap();
    let names = ["r".to_owned(), "m".to_owned()];
    assert_eq!(sup.leader(&names).await.as_deref(), Some("m"));
    sup.kill("m").await.unwrap();
    assert_eq!(sup.leader(&names).await, None, "a replica is no leader");
}
