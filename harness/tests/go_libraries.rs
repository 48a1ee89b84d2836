//! The Go lock libraries (clients/go, built by `bash scripts/setup` into clients/go/<adapter>/bin/), one
//! scenario each through the real proxies against real servers, as `lockpick scenario` runs
//! them: what the history shows each library doing when its holder is stopped past its lease.
//! A test whose adapter binary is absent says so on stderr and passes without running.

mod scenario_support;

use lockpick_checker::history::{Event, EventKind, F};
use lockpick_checker::lock::Finding;
use lockpick_checker::verdict::Verdict;
use scenario_support::{
    assert_caused_by, assert_hello, double_holder, expecting, history, run, stale_releases,
};
use std::path::{Path, PathBuf};

/// The adapter binary `name` if scripts/setup built it; None (said loudly) if not.
fn adapter(name: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../clients/go")
        .join(name)
        .join("bin")
        .join(name);
    if path.is_file() {
        Some(path)
    } else {
        eprintln!(
            "SKIPPED: the Go adapter {} is not built; run `bash scripts/setup` (needs Go 1.26+)",
            path.display()
        );
        None
    }
}

/// The first release the holder that held first in `finding` answered after it woke.
fn stale_release<'a>(events: &'a [Event], finding: &Finding) -> &'a Event {
    stale_releases(events, finding)
        .into_iter()
        .next()
        .expect("the stopped holder's release completes after it woke")
}

fn is_not_owner(e: &Event) -> bool {
    e.kind == EventKind::Fail
        && e.error
            .as_deref()
            .is_some_and(|r| r.starts_with("not-owner"))
}

/// Runs the pause scenario of a Redis-based adapter: the pause makes the double holder, and the
/// woken holder's release fails `not-owner` (its value expired or is another's): the library
/// knew, after the write.
fn a_stopped_holder_learns_too_late(binary: &str, scenario: &str, module: &str, version: &str) {
    if adapter(binary).is_none() {
        return;
    }
    let (report, dir) = expecting(run(scenario), Verdict::Invalid);
    assert_hello(&dir, module, version);
    let finding = double_holder(&report);
    assert_caused_by(finding, F::Pause);
    let events = history(&dir);
    let release = stale_release(&events, finding);
    assert!(is_not_owner(release), "{release:?}\n{report}");
}

#[test]
fn redsync_redlock_over_five_masters_cannot_save_a_stopped_process() {
    // Woken, its Unlock found no majority holding its value.
    a_stopped_holder_learns_too_late(
        "redsync",
        "go-redsync-redlock-gc-pause",
        "github.com/go-redsync/redsync/v4",
        "v4.",
    );
}

#[test]
fn redislock_cannot_save_a_stopped_process() {
    a_stopped_holder_learns_too_late(
        "redislock",
        "go-redislock-gc-pause",
        "github.com/bsm/redislock",
        "v0.",
    );
}

#[test]
fn etcd_mutex_session_expiry_gives_a_double_holder_its_token_would_fence() {
    if adapter("etcdmutex").is_none() {
        return;
    }
    let (report, dir) = expecting(run("go-etcd-mutex-session-expiry"), Verdict::Invalid);
    assert_hello(&dir, "go.etcd.io/etcd/client/v3", "v3.");
    let finding = double_holder(&report);
    assert_caused_by(finding, F::Pause);
    let events = history(&dir);
    // The token is the key's create revision: every grant's is above the one before, the
    // stopped holder's among them, so a fenced resource would refuse its late write.
    let tokens: Vec<u64> = events
        .iter()
        .filter(|e| e.f == F::Acquire && e.kind == EventKind::Ok)
        .map(|e| e.value.token.expect("every etcd grant has a token"))
        .collect();
    // Enough grants to show the order; how many a run makes is the machine's load.
    assert!(tokens.len() >= 10, "{tokens:?}");
    assert!(
        tokens.windows(2).all(|w| w[0] < w[1]),
        "tokens grow with every grant: {tokens:?}"
    );
    // Unlock is a plain Delete of the key, which etcd deleted with the lease: it answers ok for
    // a lock the session lost.
    let release = stale_release(&events, finding);
    assert_eq!(release.kind, EventKind::Ok, "{release:?}\n{report}");
}

#[test]
fn zk_lock_session_expiry_gives_a_double_holder() {
    if adapter("zklock").is_none() {
        return;
    }
    let (report, dir) = expecting(run("go-zk-lock-session-expiry"), Verdict::Invalid);
    assert_hello(&dir, "github.com/go-zookeeper/zk", "v1.");
    let finding = double_holder(&report);
    assert_caused_by(finding, F::Pause);
    let events = history(&dir);
    // The library has no token to give: no grant carries one.
    assert!(events
        .iter()
        .filter(|e| e.f == F::Acquire && e.kind == EventKind::Ok)
        .all(|e| e.value.token.is_none()));
    // Woken, the Conn found its session expired and opened a new one by itself; Unlock's
    // Delete on it finds no node (ErrNoNode): the library knew, after the write.
    let release = stale_release(&events, finding);
    assert!(is_not_owner(release), "{release:?}\n{report}");
    let stderr =
        std::fs::read_to_string(dir.join(format!("clients/p{}.stderr", finding.processes[0])))
            .unwrap_or_default();
    assert!(stderr.contains("StateExpired"), "{stderr}");
}

#[test]
fn an_init_key_the_adapter_does_not_know_stops_the_run_naming_it() {
    let Some(binary) = adapter("redislock") else {
        return;
    };
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("unknown-key.toml");
    // redislock has no auto-extension: a scenario asking for one must not run the plain lock.
    let text = format!(
        r#"
name = "go-unknown-init-key"
seed = 1

[server]
kind = "redis"

[client]
kind = "process"
command = [{binary:?}]
init = {{ auto_extend = true }}

[workload]
kind = "fenced-write"
clients = 1
duration_ms = 60000
"#
    );
    std::fs::write(&path, &text).unwrap();
    // The adapter declares that it takes no option (lockpick-adapter.json beside its source):
    // the scenario is refused when it loads, naming the field.
    let err = lockpick_harness::scenario::load_scenario(path.to_str().unwrap())
        .expect_err("an undeclared init key is refused when the scenario is loaded to run")
        .to_string();
    assert!(err.contains("client.init.auto_extend"), "{err}");
    // Without the declaration (the binary copied elsewhere) the adapter itself refuses it.
    let copy = folder.path().join("redislock");
    std::fs::copy(&binary, &copy).unwrap();
    let text = text.replace(&format!("{binary:?}"), &format!("{copy:?}"));
    std::fs::write(&path, &text).unwrap();
    let scenario = lockpick_harness::scenario::parse_scenario(&path, &text).unwrap();
    let store = tempfile::tempdir().unwrap();
    let opts = lockpick_harness::run::RunOptions {
        store: store.path().to_owned(),
        ..Default::default()
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let result = rt.block_on(lockpick_harness::run::run_scenario(
        &scenario,
        &opts,
        tokio_util::sync::CancellationToken::new(),
    ));
    let Err(lockpick_harness::run::RunError::Adapter(error)) = result else {
        panic!("an unknown init key is an error, not a verdict: {result:?}");
    };
    let message = error.to_string();
    assert!(message.contains("auto_extend"), "{message}");
}

/// go-zookeeper's Lock cannot tell a holder its lock was lost (samuel/go-zookeeper #20), but
/// its connection's events can: used as documented (`discipline = "documented"`), the holder
/// told `suspended` when the cut begins gives the lock up at once, before ZooKeeper expires
/// its session and grants another client. The same cut without the discipline is the
/// catalogue's double holder.
#[test]
fn zk_lock_used_as_documented_lets_go_when_told_and_the_cut_makes_no_double_holder() {
    if adapter("zklock").is_none() {
        return;
    }
    let (report, dir) = expecting(
        run("known-bugs/go-zookeeper-20-partition-1.0.4-documented"),
        Verdict::Valid,
    );
    let events = history(&dir);
    // A holder was told while it held: its release was invoked after the notice and before
    // any other process was granted the lock again.
    let mut holder: Option<u64> = None;
    let mut told_holder = false;
    for (i, e) in events.iter().enumerate() {
        let Some(p) = e.process.client() else {
            continue;
        };
        match (e.f, e.kind) {
            (F::Acquire, EventKind::Ok) => holder = Some(p),
            (F::Notice, _) if holder == Some(p) => {
                let release = events[i..]
                    .iter()
                    .find(|r| r.process.client() == Some(p) && r.f == F::Release)
                    .expect("the told holder releases");
                assert_eq!(release.kind, EventKind::Invoke);
                let next_grant = events[i..].iter().find(|g| {
                    g.f == F::Acquire && g.kind == EventKind::Ok && g.process.client() != Some(p)
                });
                if let Some(g) = next_grant {
                    assert!(
                        release.index < g.index,
                        "{release:?} before {g:?}\n{report}"
                    );
                }
                // Within a few milliseconds of the notice: it did not wait out its hold.
                assert!(
                    release.time_ns - e.time_ns < 200_000_000,
                    "{e:?} then {release:?}"
                );
                told_holder = true;
                break;
            }
            (F::Release, EventKind::Invoke) if holder == Some(p) => holder = None,
            _ => {}
        }
    }
    assert!(
        told_holder,
        "a holder was told of the cut while it held\n{report}"
    );
}

/// The README's first adapter in Go (docs/examples/first-adapter/go, built by scripts/setup).
fn first_go_adapter() -> Option<PathBuf> {
    let path =
        scenario_support::readme::repo().join("docs/examples/first-adapter/go/bin/my-adapter");
    if path.is_file() {
        Some(path)
    } else {
        eprintln!(
            "SKIPPED: {} is not built; run `bash scripts/setup` (needs Go 1.26+)",
            path.display()
        );
        None
    }
}

#[test]
fn the_readme_go_first_adapter_is_the_file_in_the_repo_and_pins_its_module() {
    let example = scenario_support::readme::repo().join("docs/examples/first-adapter/go");
    let main = std::fs::read_to_string(example.join("main.go")).unwrap();
    assert_eq!(scenario_support::readme::first_adapter_blocks("go"), [main]);
    // Its helper is lockpick's, byte for byte (a link here; a copy in the reader's folder).
    assert_eq!(
        std::fs::read(example.join("protocol/protocol.go")).unwrap(),
        std::fs::read(scenario_support::readme::repo().join("clients/go/protocol/protocol.go"))
            .unwrap()
    );
    let sum = std::fs::read_to_string(example.join("go.sum")).unwrap();
    assert!(
        sum.contains("github.com/redis/go-redis/v9 v9.23.0 h1:"),
        "{sum}"
    );
}

#[test]
fn the_readme_go_first_adapter_runs_and_its_gc_pause_makes_a_double_holder() {
    if first_go_adapter().is_none() {
        return;
    }
    let path =
        scenario_support::readme::repo().join("docs/examples/first-adapter/go/scenario.toml");
    let (report, dir) = expecting(run(path.to_str().unwrap()), Verdict::Invalid);
    assert_hello(&dir, "github.com/redis/go-redis/v9", "v9.23.0");
    assert_caused_by(double_holder(&report), F::Pause);
    // results.json keeps the library the hello named, which the report heads with.
    let results = lockpick_reports::read_results(&dir).unwrap();
    assert_eq!(
        results.library.as_deref(),
        Some("github.com/redis/go-redis/v9 v9.23.0")
    );
}
