//! The Java adapters (clients/java: Redisson, Apache Curator, ShedLock) run through the real proxy
//! against real servers, as `lockpick scenario` runs them. Each test skips, saying so on
//! stderr, only when the adapters' jar is not built (`bash scripts/setup` builds it; it needs a
//! JDK 17 and Maven).

mod scenario_support;

use lockpick_checker::history::{Event, EventKind, Process, F};
use lockpick_checker::lock::Finding;
use lockpick_checker::verdict::Verdict;
use lockpick_harness::run::{run_scenario, RunError, RunOptions};
use lockpick_harness::scenario::parse_scenario;
use scenario_support::{
    assert_caused_by, assert_fence_held, assert_pause_broke_the_lock, double_holder, expecting,
    history, run,
};
use std::path::Path;
use tokio_util::sync::CancellationToken;

/// True when the Java adapters are built; otherwise says loudly why the test does nothing.
fn java_adapters_built(test: &str) -> bool {
    let jar = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../clients/java/target/lockpick-java-adapters.jar");
    if jar.is_file() {
        return true;
    }
    eprintln!(
        "SKIPPED {test}: {} is not built. Run `bash scripts/setup` (it needs a JDK 17 and Maven: \
         apt-get install openjdk-17-jdk-headless maven)",
        jar.display()
    );
    false
}

/// The releases the first holder of `finding` (the one that was stopped) answered after it woke.
fn stale_releases<'a>(events: &'a [Event], finding: &Finding) -> Vec<&'a Event> {
    let stale = Process::Client(finding.processes[0]);
    let woke = finding.window.expect("a double holder has a window").end_ns;
    events
        .iter()
        .filter(|e| {
            e.process == stale
                && e.f == F::Release
                && e.kind != EventKind::Invoke
                && e.time_ns >= woke
        })
        .collect()
}

#[test]
fn redisson_watchdog_cannot_save_a_stopped_jvm() {
    if !java_adapters_built("redisson_watchdog_cannot_save_a_stopped_jvm") {
        return;
    }
    let (report, dir) = expecting(run("java-redisson-watchdog-gc-pause"), Verdict::Invalid);
    // RLock has no token, so the late write cannot be told stale; the two holders can.
    let finding = double_holder(&report);
    assert_caused_by(finding, F::Pause);
    let hello = std::fs::read_to_string(dir.join("clients/hello.json")).unwrap();
    assert!(hello.contains("\"library\":\"redisson\""), "{hello}");
    // The watchdog is a timer in the stopped JVM: the key expired, another client took it, and
    // the woken holder's unlock found no entry of its own (IllegalMonitorStateException).
    let events = history(&dir);
    let releases = stale_releases(&events, finding);
    assert!(
        releases
            .iter()
            .any(|e| e.kind == EventKind::Fail && e.error.as_deref() == Some("not-owner")),
        "the woken holder's unlock fails not-owner: {releases:?}\n{report}"
    );
}

#[test]
fn redisson_fenced_lock_tokens_grow_and_fence_off_the_stopped_holder() {
    if !java_adapters_built("redisson_fenced_lock_tokens_grow_and_fence_off_the_stopped_holder") {
        return;
    }
    let (report, dir) = expecting(run("java-redisson-fenced-gc-pause"), Verdict::Valid);
    // Two holders at once (the watchdog stopped with the JVM), but the resource refused the
    // stale token.
    assert_fence_held(&report);
    // Every grant carries a token, each larger than the one before (RFencedLock's INCR).
    let tokens: Vec<u64> = history(&dir)
        .iter()
        .filter(|e| e.f == F::Acquire && e.kind == EventKind::Ok)
        .map(|e| e.value.token.expect("RFencedLock grants carry a token"))
        .collect();
    assert!(tokens.len() > 20, "{report}");
    assert!(
        tokens.windows(2).all(|w| w[0] < w[1]),
        "tokens grow with every grant: {tokens:?}"
    );
}

#[test]
fn curator_mutex_learns_of_its_lost_session_only_after_the_stale_write() {
    if !java_adapters_built("curator_mutex_learns_of_its_lost_session_only_after_the_stale_write") {
        return;
    }
    let (report, dir) = expecting(run("java-curator-mutex-session-expiry"), Verdict::Invalid);
    assert_pause_broke_the_lock(&report);
    let finding = double_holder(&report);
    assert_caused_by(finding, F::Pause);
    // ZooKeeper expired the stopped JVM's session; Curator noticed on waking (LOST, on the
    // adapter's stderr) and the release of the lock it had lost says so.
    let events = history(&dir);
    let releases = stale_releases(&events, finding);
    assert!(
        releases.iter().any(|e| e.kind == EventKind::Fail
            && e.error
                .as_deref()
                .is_some_and(|r| r.starts_with("lost: curator reported LOST"))),
        "the woken holder's release reports LOST: {releases:?}\n{report}"
    );
    let stderr =
        std::fs::read_to_string(dir.join(format!("clients/p{}.stderr", finding.processes[0])))
            .unwrap_or_default();
    assert!(
        stderr.contains("curator: connection state LOST"),
        "{stderr}"
    );
}

#[test]
fn shedlock_jdbc_unlocks_ok_a_lock_it_had_lost() {
    if !java_adapters_built("shedlock_jdbc_unlocks_ok_a_lock_it_had_lost") {
        return;
    }
    let (report, dir) = expecting(
        run("java-shedlock-jdbc-postgres-gc-pause"),
        Verdict::Invalid,
    );
    let finding = double_holder(&report);
    assert_caused_by(finding, F::Pause);
    // lock_until passed while the JVM was stopped and another client's UPDATE took the row;
    // the woken holder's unlock matches no row of its own and says nothing.
    let events = history(&dir);
    let releases = stale_releases(&events, finding);
    assert!(
        releases.iter().any(|e| e.kind == EventKind::Ok),
        "the woken holder's unlock is ok: {releases:?}\n{report}"
    );
}

#[test]
fn a_java_adapter_refuses_an_unknown_init_key() {
    if !java_adapters_built("a_java_adapter_refuses_an_unknown_init_key") {
        return;
    }
    let _guard = scenario_support::SERIAL
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/java-typo.toml");
    // `watchdg`: a typo that a silent default would turn into the watchdog variant.
    let text = r#"
name = "java-typo"
seed = 1

[server]
kind = "redis"

[client]
kind = "process"
command = ["../clients/java/redisson/bin/redisson"]
init = { watchdg = false }

[workload]
kind = "fenced-write"
clients = 1
duration_ms = 60000
"#;
    // Its declaration (clients/java/redisson/lockpick-adapter.json) refuses the typo when the
    // scenario is loaded to run, naming the field.
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("java-typo.toml");
    let launcher = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../clients/java/redisson/bin/redisson")
        .canonicalize()
        .unwrap();
    std::fs::write(
        &file,
        text.replace(
            "\"../clients/java/redisson/bin/redisson\"",
            &format!("{launcher:?}"),
        ),
    )
    .unwrap();
    let err = lockpick_harness::scenario::load_scenario(file.to_str().unwrap())
        .expect_err("an undeclared init key is refused when the scenario is loaded to run")
        .to_string();
    assert!(err.contains("client.init.watchdg"), "{err}");
    // Parsed without that check, the adapter itself refuses it at init.
    let scenario = parse_scenario(&path, text).unwrap();
    let store = tempfile::tempdir().unwrap();
    let opts = RunOptions {
        store: store.path().to_owned(),
        ..RunOptions::default()
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let result = rt.block_on(run_scenario(&scenario, &opts, CancellationToken::new()));
    let Err(RunError::Adapter(error)) = result else {
        panic!("an unknown init key stops the run before any work: {result:?}");
    };
    let message = error.to_string();
    assert!(
        message.contains("unknown init key") && message.contains("watchdg"),
        "{message}"
    );
    assert!(
        message.contains("watchdog (boolean, default true)"),
        "{message}"
    );
}
