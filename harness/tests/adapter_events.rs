//! Event lines (client protocol 2) through a real adapter process: one written inside a
//! request and one written between requests are both recorded in the history as `notice`s of
//! the adapter's process, and the requests around them go on; an event its hello did not
//! declare, one from a protocol 1 adapter, one before the hello and a reply nobody asked for
//! each stop the run with an error naming the adapter, the line and what is allowed.

use lockpick_checker::history::{read_history, EventKind, Process, F};
use lockpick_harness::client::process::{
    AdapterError, ProcessLock, ProcessParams, ProcessSession, ProcessSpec,
};
use lockpick_harness::client::{Connecting, LockClient, LockSession, Outcome, PausePoints};
use lockpick_harness::recorder::Recorder;
use lockpick_harness::scenario::MsRange;
use serde_json::{Map, Value as Json};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn adapter(mode: &str) -> ProcessSpec {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/event_adapter.py");
    let mut extra = Map::new();
    extra.insert("mode".to_owned(), Json::from(mode));
    ProcessSpec {
        command: vec!["python3".to_owned(), script.display().to_string()],
        env: Vec::new(),
        extra,
    }
}

fn lock(mode: &str) -> ProcessLock {
    let nodes: [SocketAddr; 1] = [([127, 0, 0, 1], 9).into()];
    ProcessLock::new(
        adapter(mode),
        &nodes,
        ProcessParams {
            lock: "lock".to_owned(),
            ttl_ms: 1000,
            acquire_timeout_ms: 300,
            retry_delay: MsRange { min: 5, max: 20 },
            op_timeout_ms: 2000,
            watchdog: false,
        },
    )
}

async fn connect(
    lock: &ProcessLock,
    run: &Path,
    points: Arc<PausePoints>,
) -> Result<ProcessSession, String> {
    let who = Connecting {
        client: 0,
        process: 4,
        seed: 1,
        run_dir: run.to_owned(),
    };
    lock.connect_as(who, points).await
}

/// Waits (up to 10 s) until the history file holds `n` notices; the recorder flushes within
/// milliseconds, a loaded machine may take longer to run the adapter's thread.
async fn notices(recorder: &Recorder, path: &Path, n: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        recorder.flush().unwrap();
        let found = read_history(path)
            .unwrap()
            .iter()
            .filter(|e| e.f == F::Notice)
            .count();
        if found >= n || Instant::now() > deadline {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn events_inside_and_between_requests_are_recorded_as_notices_of_the_process() {
    let run = tempfile::tempdir().unwrap();
    let path = run.path().join("history.jsonl");
    let recorder = Arc::new(Recorder::create(&path).unwrap());
    // The workload has started, as the runner says once every client has its session: a
    // notice before that is no part of the history.
    recorder.restart_clock();
    let points = Arc::new(PausePoints::default());
    points.record_to(recorder.clone());
    let lock = lock("declared");
    let mut session = connect(&lock, run.path(), points).await.unwrap();
    let grant = match session
        .acquire("4-a", Instant::now() + Duration::from_millis(300))
        .await
    {
        Outcome::Ok(g) => g,
        other => panic!("acquire: {other:?}"),
    };
    assert_eq!(grant.token, Some(5));
    // The second event comes between requests: the reader of unasked lines records it.
    assert_eq!(notices(&recorder, &path, 2).await, 2);
    assert_eq!(session.release(&grant).await, Outcome::Ok(()));
    assert!(lock.broken().is_none());
    drop(session);
    recorder.finish().unwrap();
    let events = read_history(&path).unwrap();
    let told: Vec<_> = events.iter().filter(|e| e.f == F::Notice).collect();
    assert_eq!(told.len(), 2, "{events:?}");
    for (e, reason) in told.iter().zip(["inside", "between"]) {
        assert_eq!(e.process, Process::Client(4));
        assert_eq!(e.kind, EventKind::Info);
        assert_eq!(e.lock.as_deref(), Some("lock"));
        assert_eq!(e.value.event.as_deref(), Some("lost"));
        assert_eq!(e.value.note.as_deref(), Some(reason));
    }
    assert_eq!(told[0].value.token, Some(5));
    let hello = std::fs::read_to_string(run.path().join("clients/hello.json")).unwrap();
    assert!(hello.contains(r#""protocol": 2"#) || hello.contains(r#""protocol":2"#));
}

#[tokio::test]
async fn notices_sent_before_the_workload_starts_are_left_out() {
    // No clock restart: the workload has not started, as while clients open their sessions.
    // The same adapter's two events (one inside the acquire, one after it) concern no
    // holding of the history: neither is recorded, and nothing breaks.
    let run = tempfile::tempdir().unwrap();
    let path = run.path().join("history.jsonl");
    let recorder = Arc::new(Recorder::create(&path).unwrap());
    let points = Arc::new(PausePoints::default());
    points.record_to(recorder.clone());
    let lock = lock("declared");
    let mut session = connect(&lock, run.path(), points).await.unwrap();
    let grant = match session
        .acquire("4-a", Instant::now() + Duration::from_millis(300))
        .await
    {
        Outcome::Ok(g) => g,
        other => panic!("acquire: {other:?}"),
    };
    // The second event comes 50 ms after the reply; the release after it reads it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(session.release(&grant).await, Outcome::Ok(()));
    assert!(lock.broken().is_none());
    drop(session);
    recorder.finish().unwrap();
    let events = read_history(&path).unwrap();
    assert!(events.iter().all(|e| e.f != F::Notice), "{events:?}");
}

/// Connects an adapter in `mode`, acquires, waits for its unasked line, releases; returns the
/// release's outcome and the error kept for the driver.
async fn break_between(mode: &str) -> (Outcome<()>, Option<AdapterError>) {
    let run = tempfile::tempdir().unwrap();
    let lock = lock(mode);
    let mut session = connect(&lock, run.path(), Arc::default()).await.unwrap();
    let grant = match session
        .acquire("4-a", Instant::now() + Duration::from_millis(300))
        .await
    {
        Outcome::Ok(g) => g,
        other => panic!("acquire: {other:?}"),
    };
    // The adapter writes its line 50 ms after the reply; the release after it reports it.
    // The line may come later on a loaded machine: then the release's own read meets it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let outcome = session.release(&grant).await;
    (outcome, lock.broken())
}

#[tokio::test]
async fn an_undeclared_event_stops_the_run_naming_the_field_and_what_is_allowed() {
    let (outcome, broken) = break_between("undeclared").await;
    assert_eq!(outcome, Outcome::Info("protocol-error".to_owned()));
    let message = broken.expect("kept for the driver").to_string();
    assert!(message.contains("client 0 (process 4"), "{message}");
    assert!(
        message.contains(
            r#"field `event`: "suspended" is not an event its hello declared; allowed: lost"#
        ),
        "{message}"
    );
    assert!(
        message.contains(r#"the line it sent: {"type": "event", "event": "suspended"}"#),
        "{message}"
    );
}

#[tokio::test]
async fn a_protocol_1_adapter_may_not_send_events() {
    let (outcome, broken) = break_between("v1").await;
    assert_eq!(outcome, Outcome::Info("protocol-error".to_owned()));
    let message = broken.expect("kept for the driver").to_string();
    assert!(
        message
            .contains("it sent an event line, which needs protocol 2; its hello said protocol 1"),
        "{message}"
    );
}

#[tokio::test]
async fn a_reply_nobody_asked_for_is_a_break() {
    let (outcome, broken) = break_between("stray").await;
    assert_eq!(outcome, Outcome::Info("protocol-error".to_owned()));
    let message = broken.expect("kept for the driver").to_string();
    // Read between requests, or (on a loaded machine) as the release's reply with id 99.
    assert!(
        message.contains("while no request was in flight")
            || message.contains("its reply carries id 99"),
        "{message}"
    );
}

#[tokio::test]
async fn an_event_before_the_hello_is_a_break() {
    let run = tempfile::tempdir().unwrap();
    let lock = lock("early");
    let Err(error) = connect(&lock, run.path(), Arc::default()).await else {
        panic!("an event before the hello must not give a session");
    };
    assert!(error.contains("an event line before its hello"), "{error}");
}

#[tokio::test]
async fn a_version_1_adapter_that_insists_on_protocol_1_still_works() {
    // init's `protocol` is the oldest version lockpick speaks; the newest is beside it.
    let run = tempfile::tempdir().unwrap();
    let lock = lock("strict-v1");
    let mut session = connect(&lock, run.path(), Arc::default()).await.unwrap();
    let grant = match session
        .acquire("4-a", Instant::now() + Duration::from_millis(300))
        .await
    {
        Outcome::Ok(g) => g,
        other => panic!("acquire: {other:?}"),
    };
    assert_eq!(session.release(&grant).await, Outcome::Ok(()));
    assert!(lock.broken().is_none());
    let hello = std::fs::read_to_string(run.path().join("clients/hello.json")).unwrap();
    assert!(hello.contains(r#""protocol": 1"#) || hello.contains(r#""protocol":1"#));
}
