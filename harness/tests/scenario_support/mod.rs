//! Running a shipped scenario from an integration test, in a temporary store removed
//! afterwards, with the checks every scenario test makes. Each test is a process of its own
//! under nextest (scripts/test), whose test groups (.config/nextest.toml) say which may run
//! together.

// Each test binary that includes this module uses only part of it.
#![allow(dead_code)]

pub mod readme;

use lockpick_checker::history::{read_history, Event, F};
use lockpick_checker::lock::{Finding, FindingKind, LockReport};
use lockpick_checker::verdict::Verdict;
use lockpick_harness::run::{run_scenario, RunOptions};
use lockpick_harness::scenario::load_scenario;
use tokio_util::sync::CancellationToken;

/// True when every file `scripts/setup` builds with Maven that `test` needs is there (paths
/// from the repository's root); otherwise says loudly why not, and how to build them.
pub fn maven_built(test: &str, paths: &[String]) -> bool {
    built(
        test,
        paths,
        "it needs a JDK 17 and Maven: apt-get install openjdk-17-jdk-headless maven",
    )
}

/// True when every file `scripts/setup` builds that `test` needs is there (paths from the
/// repository's root); otherwise says loudly why not: run setup, which `needs` what it says.
pub fn built(test: &str, paths: &[String], needs: &str) -> bool {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let missing: Vec<_> = (paths.iter())
        .map(|path| root.join(path))
        .filter(|path| !path.is_file())
        .collect();
    if missing.is_empty() {
        return true;
    }
    eprintln!("SKIPPED {test}: {missing:?} not built. Run `bash scripts/setup` ({needs})");
    false
}

/// A run's store folder, removed with its temporary store when dropped.
pub struct RunDir {
    path: std::path::PathBuf,
    _store: tempfile::TempDir,
}

impl std::ops::Deref for RunDir {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.path
    }
}

pub fn run(name: &str) -> (LockReport, Verdict, Option<Verdict>, RunDir) {
    run_min_ops(name, 20)
}

/// Runs `name` and asserts it completed more than `min_ops` operations.
pub fn run_min_ops(name: &str, min_ops: u64) -> (LockReport, Verdict, Option<Verdict>, RunDir) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    run_in(&rt, name, min_ops, |_| {})
}

/// Runs `name` on `rt` with options changed by `tweak`, and asserts it completed more than
/// `min_ops` operations.
pub fn run_in(
    rt: &tokio::runtime::Runtime,
    name: &str,
    min_ops: u64,
    tweak: impl FnOnce(&mut RunOptions),
) -> (LockReport, Verdict, Option<Verdict>, RunDir) {
    let scenario = load_scenario(name).expect("shipped scenario loads");
    let store = tempfile::tempdir().expect("temp dir");
    let mut opts = RunOptions {
        store: store.path().to_owned(),
        reproduce: format!("cargo run -- scenario {name}"),
        ..RunOptions::default()
    };
    tweak(&mut opts);
    let outcome = rt
        .block_on(run_scenario(&scenario, &opts, CancellationToken::new()))
        .unwrap_or_else(|e| panic!("{name}: harness error: {e}"));
    assert!(outcome.dir.join("results.json").is_file());
    assert!(
        outcome.results.ops > min_ops,
        "{name}: only {} ops",
        outcome.results.ops
    );
    let r = outcome.results;
    eprintln!("{name}: {}", r.lock);
    let dir = RunDir {
        path: outcome.dir,
        _store: store,
    };
    (r.lock, r.verdict, r.expected, dir)
}

/// Asserts a run reached `want` and that its scenario expects it; hands back the report and
/// the run's folder.
pub fn expecting(
    (report, verdict, expected, dir): (LockReport, Verdict, Option<Verdict>, RunDir),
    want: Verdict,
) -> (LockReport, RunDir) {
    assert_eq!(verdict, want, "{report}");
    assert_eq!(expected, Some(want));
    (report, dir)
}

/// The history of a run, for checks beyond the report.
pub fn history(dir: &std::path::Path) -> Vec<Event> {
    read_history(&dir.join("history.jsonl")).unwrap()
}

/// The server of a run as its `results.json` records it.
pub fn server_ran(dir: &std::path::Path) -> lockpick_checker::results::ServerRan {
    let text = std::fs::read_to_string(dir.join("results.json")).unwrap();
    let results: lockpick_checker::results::RunResults = serde_json::from_str(&text).unwrap();
    results.server.expect("results.json records the server")
}

/// Asserts that the run's `results.json` names `kind` at `release`, and that the version the
/// running server reported is a release of it (`3.6` → `3.6.16`).
pub fn assert_server_ran(dir: &std::path::Path, kind: &str, release: &str) {
    let ran = server_ran(dir);
    assert_eq!(ran.kind, kind, "{ran:?}");
    assert_eq!(ran.release.as_deref(), Some(release), "{ran:?}");
    let version = ran
        .version
        .as_deref()
        .expect("the server reported its version");
    assert!(
        version.starts_with(&format!("{release}.")),
        "{kind} {release} reported {version}"
    );
}

/// Asserts the stats of a baseline run: the lock passed between its clients many times, and
/// never had two holders at once. "Many" is what any run shows, not what a quiet machine does:
/// grants come at the servers' fsync rate, which a loaded CI disk sets. A quiet machine's
/// baselines passed a threshold of 50 for months; with a CI run's load beside it etcd's lock
/// service made 47, and later 19 in its 4 s (a clean-clone CI of 7d67241, whose threshold of 20
/// it missed by one). 10 grants among the clients still test the exclusion many times over, and
/// are half the fewest any run has shown.
pub fn assert_baseline_stats(report: &LockReport) {
    assert!(report.stats.acquires_ok >= 10, "{report}");
    assert_eq!(report.stats.max_concurrent_holders, 1);
}

/// Asserts `findings` (of `report`) hold each kind of `wanted`.
pub fn assert_kinds(findings: &[Finding], wanted: &[FindingKind], report: &LockReport) {
    let found = kinds(findings);
    for kind in wanted {
        assert!(found.contains(kind), "{report}");
    }
}

/// The first double holder the report found, which the test expects.
pub fn double_holder(report: &LockReport) -> &Finding {
    report
        .violations
        .iter()
        .find(|f| f.kind == FindingKind::DoubleHolder)
        .unwrap_or_else(|| panic!("no double holder: {report}"))
}

/// Asserts a fault `f` is among those named with `finding`, as its likely cause.
pub fn assert_caused_by(finding: &Finding, f: F) {
    assert!(
        finding.faults.iter().any(|w| w.f == f),
        "the {f} that caused it is named: {finding:?}"
    );
}

/// Asserts what a client pause past the lease did to an unfenced resource: two holders at once,
/// the stale holder's write accepted, and the pause named as the cause.
pub fn assert_pause_broke_the_lock(report: &LockReport) {
    assert_kinds(
        &report.violations,
        &[FindingKind::DoubleHolder, FindingKind::StaleWrite],
        report,
    );
    assert_caused_by(double_holder(report), F::Pause);
}

/// Asserts the fence held under the same pause: two holders at once were seen, and the stale
/// holder's write was rejected.
pub fn assert_fence_held(report: &LockReport) {
    assert_kinds(
        &report.observations,
        &[FindingKind::DoubleHolder, FindingKind::RejectedStaleWrite],
        report,
    );
}

pub fn kinds(findings: &[lockpick_checker::lock::Finding]) -> Vec<FindingKind> {
    findings.iter().map(|f| f.kind).collect()
}

/// The stretches during which the nemesis fault `opener` on exactly `nodes` was surely in
/// force: from the completion of `opener` to the invoke of the `closer` that ended it (the
/// fault windows of the checker are the wider, "may have been in force" bounds).
pub fn surely_in_force(
    events: &[lockpick_checker::history::Event],
    opener: lockpick_checker::history::F,
    closer: lockpick_checker::history::F,
    nodes: &[&str],
) -> Vec<(u64, u64)> {
    use lockpick_checker::history::{EventKind, Process};
    let mut out = Vec::new();
    let mut from = None;
    for e in events.iter().filter(|e| {
        e.process == Process::Nemesis
            && e.value
                .nodes
                .iter()
                .map(String::as_str)
                .eq(nodes.iter().copied())
    }) {
        match (e.f, e.kind) {
            (f, EventKind::Info) if f == opener && e.error.is_none() => from = Some(e.time_ns),
            (f, EventKind::Invoke) if f == closer => {
                if let Some(start) = from.take() {
                    out.push((start, e.time_ns));
                }
            }
            _ => {}
        }
    }
    out
}

/// Asserts the lock was in use on both sides of the first fault `f` the nemesis invoked: some
/// grant completed before it and some after it began. A valid verdict over a run in which
/// nobody got the lock once the fault struck would prove nothing; counting grants instead
/// would depend on how loaded the machine is.
pub fn assert_grants_around(dir: &std::path::Path, f: F) {
    use lockpick_checker::history::{EventKind, Process};
    let events = history(dir);
    let struck = events
        .iter()
        .find(|e| e.process == Process::Nemesis && e.f == f && e.kind == EventKind::Invoke)
        .unwrap_or_else(|| panic!("no {f} in the history"))
        .time_ns;
    let grants = |before: bool| {
        events
            .iter()
            .filter(|e| e.f == F::Acquire && e.kind == EventKind::Ok)
            .filter(|e| (e.time_ns < struck) == before)
            .count()
    };
    let (before, after) = (grants(true), grants(false));
    assert!(
        before > 0 && after > 0,
        "grants before the {f}: {before}, after it began: {after}"
    );
}

/// Asserts the run's hello (`clients/hello.json`) names `library` at a version starting with
/// `version_prefix` (what the adapter read from its package or build info).
pub fn assert_hello(dir: &std::path::Path, library: &str, version_prefix: &str) {
    let text = std::fs::read_to_string(dir.join("clients/hello.json")).unwrap();
    let hello: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(hello["library"], library, "{text}");
    assert!(
        hello["version"]
            .as_str()
            .is_some_and(|v| v.starts_with(version_prefix)),
        "{text}"
    );
}

/// The releases the first holder of `finding` (the one that was stopped) answered after it
/// woke.
pub fn stale_releases<'a>(events: &'a [Event], finding: &Finding) -> Vec<&'a Event> {
    let stale = lockpick_checker::history::Process::Client(finding.processes[0]);
    let woke = finding.window.expect("a double holder has a window").end_ns;
    events
        .iter()
        .filter(|e| {
            e.process == stale
                && e.f == F::Release
                && e.kind != lockpick_checker::history::EventKind::Invoke
                && e.time_ns >= woke
        })
        .collect()
}

// The `lost` notices of protocol 2 adapters, checked by the library tests of several languages.

/// Every `lost` notice the report sets after another process's grant came from the holder,
/// after that grant, and any write it lists lies between the two; at least one such notice
/// exists. The summary prints learned-at beside lost-at.
pub fn assert_learned_late<'a>(
    report: &'a LockReport,
    events: &[Event],
) -> Vec<&'a lockpick_checker::lock::Learned> {
    use lockpick_checker::history::{EventKind, Process};
    let late: Vec<_> = report
        .learned
        .iter()
        .filter(|l| {
            l.event == "lost"
                && l.lost_by
                    .as_deref()
                    .is_some_and(|b| b.starts_with("granted to process"))
                && l.delay_ns.is_some_and(|d| d > 0)
        })
        .collect();
    assert!(!late.is_empty(), "{report}");
    for l in &late {
        let lost = &events[l.lost_index.unwrap() as usize];
        let notice = &events[l.index as usize];
        assert_eq!((lost.f, lost.kind), (F::Acquire, EventKind::Ok));
        assert_ne!(lost.process, Process::Client(l.process));
        assert_eq!(
            (notice.f, notice.process),
            (F::Notice, Process::Client(l.process))
        );
        assert!(lost.index < notice.index);
        for &w in &l.writes_between {
            let write = &events[w as usize];
            assert_eq!((write.f, write.kind), (F::Write, EventKind::Invoke));
            assert_eq!(write.process, Process::Client(l.process));
            assert!(lost.index < w && w < notice.index);
        }
    }
    let summary = report.to_string();
    assert!(summary.contains("TOLD: process"), "{summary}");
    assert!(summary.contains("after it lost the lock at"), "{summary}");
    late
}

/// The notices of a run, each checked to be a client's `info` carrying one of `events`.
pub fn notices<'a>(events: &'a [Event], allowed: &[&str]) -> Vec<&'a Event> {
    use lockpick_checker::history::{EventKind, Process};
    let told: Vec<&Event> = events.iter().filter(|e| e.f == F::Notice).collect();
    for e in &told {
        assert!(matches!(e.process, Process::Client(_)), "{e:?}");
        assert_eq!(e.kind, EventKind::Info);
        assert!(
            allowed.contains(&e.value.event.as_deref().unwrap_or("")),
            "{e:?}"
        );
    }
    told
}

/// Runs a ZooKeeper library's session-expiry scenario: the library's connection listener told
/// the stopped holder LOST, after another process was granted the lock.
pub fn assert_zookeeper_library_told_lost(scenario: &str) {
    let (report, dir) = expecting(run(scenario), Verdict::Invalid);
    let events = history(&dir);
    let told = notices(&events, &["lost", "suspended", "reconnected"]);
    assert!(
        told.iter().any(|e| e.value.event.as_deref() == Some("lost")
            && e.value.note.as_deref() == Some("connection state LOST")),
        "{report}"
    );
    assert_learned_late(&report, &events);
}
