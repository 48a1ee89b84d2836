//! The Java adapters (clients/java/<library>: Redisson, Apache Curator, ShedLock, and Spring
//! Integration's lock registries) run through the real proxy against real servers, as
//! `lockpick scenario` runs them. Each test skips, saying so on stderr, only when the jar of a
//! library it runs is not built (`bash scripts/setup` builds them; it needs a JDK 17 and
//! Maven), except the one where Curator's connection listener tells its holder LOST (a
//! protocol 2 `lost` event) only after another process was granted the lock, which has no skip
//! and fails without the jar.

mod scenario_support;

use lockpick_checker::history::{Event, EventKind, Process, F};
use lockpick_checker::lock::{FindingKind, LockReport};
use lockpick_checker::verdict::Verdict;
use lockpick_harness::run::{run_scenario, RunError, RunOptions};
use lockpick_harness::scenario::parse_scenario;
use scenario_support::{
    assert_caused_by, assert_fence_held, assert_grants_around, assert_hello,
    assert_pause_broke_the_lock, assert_zookeeper_library_told_lost, double_holder, expecting,
    history, maven_built, run, run_in, stale_releases, RunDir,
};
use std::path::Path;
use tokio_util::sync::CancellationToken;

/// True when the Redisson, Curator and ShedLock adapters are built; otherwise says loudly why
/// the test does nothing.
fn java_adapters_built(test: &str) -> bool {
    libraries_built(test, &["redisson", "curator", "shedlock-jdbc"])
}

/// True when the Spring Integration adapters are built; otherwise says loudly why not.
fn spring_adapters_built(test: &str) -> bool {
    libraries_built(test, &["spring-redis", "spring-jdbc", "spring-zookeeper"])
}

/// True when each library's jar (clients/java/<library>/target/lockpick-adapter.jar) is there.
fn libraries_built(test: &str, libraries: &[&str]) -> bool {
    let jars: Vec<String> = (libraries.iter())
        .map(|library| format!("clients/java/{library}/target/lockpick-adapter.jar"))
        .collect();
    maven_built(test, &jars)
}

/// What the stopped holder answered once it woke, in a run of `scenario` that must come out
/// INVALID with two holders caused by the client pause.
struct Woken {
    report: LockReport,
    dir: RunDir,
    /// The releases the stopped holder answered after it woke.
    releases: Vec<Event>,
}

fn stopped_holder_broke_the_lock(scenario: &str) -> Woken {
    let (report, dir) = expecting(run(scenario), Verdict::Invalid);
    let finding = double_holder(&report);
    assert_caused_by(finding, F::Pause);
    let events = history(&dir);
    let releases = stale_releases(&events, finding)
        .into_iter()
        .cloned()
        .collect();
    Woken {
        report,
        dir,
        releases,
    }
}

impl Woken {
    /// Asserts that one of the woken holder's releases was answered as `what` says.
    fn assert_release(&self, what: &str, answered: impl Fn(&Event) -> bool) {
        assert!(
            self.releases.iter().any(answered),
            "the woken holder's unlock {what}: {:?}\n{}",
            self.releases,
            self.report
        );
    }
}

#[test]
fn redisson_watchdog_cannot_save_a_stopped_jvm() {
    if !java_adapters_built("redisson_watchdog_cannot_save_a_stopped_jvm") {
        return;
    }
    // RLock has no token, so the late write cannot be told stale; the two holders can.
    let woken = stopped_holder_broke_the_lock("java-redisson-watchdog-gc-pause");
    assert_hello(&woken.dir, "redisson", "3.");
    // The watchdog is a timer in the stopped JVM: the key expired, another client took it, and
    // the woken holder's unlock found no entry of its own (IllegalMonitorStateException).
    woken.assert_release("fails not-owner", is_not_owner);
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
    // Enough grants to show the order; how many a run makes is the machine's load.
    assert!(tokens.len() >= 10, "{report}");
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
    let woken = stopped_holder_broke_the_lock("java-shedlock-jdbc-postgres-gc-pause");
    // lock_until passed while the JVM was stopped and another client's UPDATE took the row;
    // the woken holder's unlock matches no row of its own and says nothing.
    woken.assert_release("is ok", |e| e.kind == EventKind::Ok);
}

fn is_not_owner(e: &Event) -> bool {
    e.kind == EventKind::Fail && e.error.as_deref() == Some("not-owner")
}

#[test]
fn redisson_multilock_over_five_masters_cannot_save_a_stopped_jvm() {
    if !java_adapters_built("redisson_multilock_over_five_masters_cannot_save_a_stopped_jvm") {
        return;
    }
    let woken = stopped_holder_broke_the_lock("java-redisson-multilock-gc-pause");
    assert_hello(&woken.dir, "redisson", "3.");
    // Every master's key expired with the watchdogs stopped; woken, the MultiLock's unlock
    // stopped at the first sub-lock (IllegalMonitorStateException) and none is its own now.
    // The exception cannot say whether this call released any sub-lock before the one that
    // was gone, so the adapter claims neither: the outcome is unknown (info), not a release
    // that failed, which the lease model would read as the holder keeping the lock.
    woken.assert_release("is unknown, every sub-lock gone", |e| {
        e.kind == EventKind::Info
            && e.error
                .as_deref()
                .is_some_and(|r| r.contains("none is held now"))
    });
}

#[test]
fn redisson_multilock_unlock_that_meets_a_forgotten_sub_lock_keeps_everyone_else_out() {
    if !java_adapters_built(
        "redisson_multilock_unlock_that_meets_a_forgotten_sub_lock_keeps_everyone_else_out",
    ) {
        return;
    }
    // The stall needs the crash of n1 to strike while a client holds the lock, and that
    // holder's unlock to reach n1 once it is back, empty: the unlock then meets the sub-lock n1
    // forgot and fails not-owner. A run whose crash fell between holds, or whose unlock reached
    // n1 while it was still restarting (a clean-clone CI run of 6b85fba under load: the release
    // did not come back not-owner, and the run stalled by another path), shows another episode,
    // and the next seed is tried (a clean-clone CI run of 6825bcc had a crash between holds on
    // seed 1). Ten seeds all missing: below 2e-5 even if a third of runs missed.
    let name = "java-redisson-multilock-crash-stall";
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut exposed = None;
    for seed in 1..=10 {
        let run = run_in(&rt, name, 5, |o| o.seed = Some(seed));
        if !held_when_first_struck(&run.3, F::Crash) {
            eprintln!("{name} seed {seed}: no holder when n1 crashed; next seed");
            continue;
        }
        let events = history(&run.3);
        if not_owner_release_after_crash(&events).is_none() {
            eprintln!(
                "{name} seed {seed}: no release came back not-owner after the crash ({}); next seed",
                run.0
            );
            continue;
        }
        exposed = Some((run, events));
        break;
    }
    let Some(((report, verdict, expected, dir), events)) = exposed else {
        panic!("{name}: in 10 seeds no holder's unlock met n1's forgotten sub-lock");
    };
    assert_eq!(expected, Some(Verdict::Stuck));
    // Liveness, not safety: never two holders, and the lease model takes the holder's
    // re-entries as re-entries.
    assert_ne!(verdict, Verdict::Invalid, "{report}");
    // The holder's unlock threw at n1's forgotten sub-lock and left n2-n5 held.
    let failed = not_owner_release_after_crash(&events).expect("chosen for it");
    let Process::Client(holder) = failed.process else {
        panic!("a release by the nemesis: {failed:?}")
    };
    // What it is: liveness. While the holder re-enters after its failed release (its holding
    // kept, the release having not happened), it is a lockout by the holder; once its holding
    // ends (a later release came back, or the lease the clients count ran out) nobody holds
    // the lock as the clients see it while its sub-locks on n2-n5 live on, renewed by the
    // holder's watchdog: a deadlock. Which of the two a seed shows depends on whether the
    // holder asked again; any lockout is the holder's.
    assert!(!report.violations.is_empty(), "{report}");
    assert!(
        (report.violations.iter()).all(|f| match f.kind {
            FindingKind::Lockout => f.processes.first() == Some(&holder),
            FindingKind::Deadlock => true,
            _ => false,
        }),
        "{report}"
    );
    let stderr = std::fs::read_to_string(dir.join(format!("clients/p{holder}.stderr")))
        .expect("the holder's stderr");
    assert!(
        stderr.contains("still held (and renewed): n2, n3, n4, n5"),
        "{stderr}"
    );
    // From then to the end, every other client asked and none was granted the lock.
    let after: Vec<&Event> = events
        .iter()
        .filter(|e| e.f == F::Acquire && e.time_ns > failed.time_ns && e.process != failed.process)
        .collect();
    assert!(
        after.iter().all(|e| e.kind != EventKind::Ok),
        "another client got the lock after {holder}'s failed release: {after:?}"
    );
    assert!(
        after.iter().filter(|e| e.kind == EventKind::Fail).count() >= 3,
        "the others asked: {after:?}"
    );
}

/// The first release after n1's crash that came back not-owner, if one did.
fn not_owner_release_after_crash(events: &[Event]) -> Option<&Event> {
    let crashed_at = events
        .iter()
        .find(|e| e.f == F::Crash && e.kind == EventKind::Info)?
        .time_ns;
    events
        .iter()
        .find(|e| e.f == F::Release && e.time_ns > crashed_at && is_not_owner(e))
}

#[test]
fn spring_redis_registry_renewal_cannot_save_a_stopped_jvm() {
    if !spring_adapters_built("spring_redis_registry_renewal_cannot_save_a_stopped_jvm") {
        return;
    }
    let woken = stopped_holder_broke_the_lock("java-spring-redis-registry-renewal-gc-pause");
    assert_hello(&woken.dir, "spring-integration-redis", "7.");
    // The renewal task runs on a scheduler thread of the stopped JVM; woken, the registry's
    // compare-and-UNLINK finds another client's id and throws ConcurrentModificationException.
    woken.assert_release("fails not-owner", is_not_owner);
}

#[test]
fn spring_jdbc_registry_on_postgres_cannot_save_a_stopped_jvm() {
    if !spring_adapters_built("spring_jdbc_registry_on_postgres_cannot_save_a_stopped_jvm") {
        return;
    }
    let woken = stopped_holder_broke_the_lock("java-spring-jdbc-postgres-gc-pause");
    assert_hello(&woken.dir, "spring-integration-jdbc", "7.");
    // Another client's UPDATE took the expired INT_LOCK row (CLIENT_ID theirs); woken, the
    // registry's DELETE ... AND CLIENT_ID = ours matches no row: ConcurrentModificationException.
    woken.assert_release("fails not-owner", is_not_owner);
}

#[test]
fn spring_zookeeper_registry_unlocks_ok_a_lock_its_expired_session_lost() {
    if !spring_adapters_built(
        "spring_zookeeper_registry_unlocks_ok_a_lock_its_expired_session_lost",
    ) {
        return;
    }
    let woken = stopped_holder_broke_the_lock("java-spring-zookeeper-session-expiry");
    assert_hello(&woken.dir, "spring-integration-zookeeper", "7.");
    // ZooKeeper deleted the stopped JVM's ephemeral node with its session; the registry's
    // unlock is Curator's guaranteed delete, which takes a node already gone as released.
    woken.assert_release("is ok", |e| e.kind == EventKind::Ok);
}

#[test]
fn shedlock_on_mariadb_with_db_time_follows_the_servers_clock_jump() {
    if !java_adapters_built("shedlock_on_mariadb_with_db_time_follows_the_servers_clock_jump") {
        return;
    }
    // Only the first jump can break it (the scenario's description says why), and only if it
    // strikes while a holder holds and another JVM's UPDATE reaches the server inside its
    // 200 ms: on a loaded machine the JVMs' first grant can come after it, or the others may
    // not be asking yet (a clean-clone CI run of 7d27887 came out valid with 7 grants in 5 s).
    // Such a run tested nothing, and the history says which runs did: a holder across the
    // jump's start, and another process's acquire open from before the jump to after its
    // reset (retrying every 5-20 ms, so its UPDATEs fall inside unless its JVM stood still for
    // the whole jump). The first such run must be invalid. The jump struck a holder in 9 runs
    // of 10 (seeds 1-10, docs/tiers.md), with others asking in every one: six seeds all
    // missing has a chance of about 1 in a million.
    let name = "java-shedlock-jdbc-mariadb-db-time-clock-jump";
    let rt = tokio::runtime::Runtime::new().unwrap();
    for seed in 1..=6 {
        let run = run_in(&rt, name, 20, |o| o.seed = Some(seed));
        if !held_when_first_struck(&run.3, F::Clock) {
            eprintln!("{name} seed {seed}: no holder when the first jump struck; next seed");
            continue;
        }
        if !asked_throughout_first(&run.3, F::Clock, F::ClockReset) {
            eprintln!("{name} seed {seed}: nobody else asked throughout the first jump; next seed");
            continue;
        }
        let (report, dir) = expecting(run, Verdict::Invalid);
        assert_hello(&dir, "shedlock-provider-jdbc-template", "7.");
        // usingDbTime(): lock_until <= UTC_TIMESTAMP(3) on the server, whose clock jumped past
        // a live holder's lock_until.
        let finding = double_holder(&report);
        assert_caused_by(finding, F::Clock);
        return;
    }
    panic!("{name}: in 6 seeds the first jump never struck a holder while another asked");
}

/// Whether, from the history's first `start` (its invoke) to the first `end` after it (its
/// completion), some process had an acquire open the whole time: invoked before the start,
/// not completed before the end. A process that holds across the start has no acquire open,
/// so this names a contender.
fn asked_throughout_first(dir: &Path, start: F, end: F) -> bool {
    let events = history(dir);
    let Some(from) = events
        .iter()
        .find(|e| e.process == Process::Nemesis && e.f == start && e.kind == EventKind::Invoke)
        .map(|e| e.time_ns)
    else {
        return false;
    };
    let Some(to) = events
        .iter()
        .find(|e| e.process == Process::Nemesis && e.f == end && e.time_ns > from)
        .map(|e| e.time_ns)
    else {
        return false;
    };
    let mut open: std::collections::HashMap<Process, u64> = Default::default();
    for e in events.iter().filter(|e| e.f == F::Acquire) {
        match e.kind {
            EventKind::Invoke => {
                open.insert(e.process, e.time_ns);
            }
            _ => {
                if open
                    .remove(&e.process)
                    .is_some_and(|at| at < from && e.time_ns > to)
                {
                    return true;
                }
            }
        }
    }
    // An acquire still open when the history ended.
    open.values().any(|&at| at < from)
}

/// Whether a client held the lock when the history's first `f` struck: granted before it,
/// its release invoked after it.
fn held_when_first_struck(dir: &Path, f: F) -> bool {
    use lockpick_checker::history::Process;
    let events = history(dir);
    let Some(struck) = events
        .iter()
        .find(|e| e.process == Process::Nemesis && e.f == f && e.kind == EventKind::Invoke)
        .map(|e| e.time_ns)
    else {
        return false;
    };
    let mut granted: std::collections::HashMap<Process, u64> = Default::default();
    for e in &events {
        match (e.f, e.kind) {
            (F::Acquire, EventKind::Ok) => {
                granted.insert(e.process, e.time_ns);
            }
            (F::Release, EventKind::Invoke) => {
                let across = granted
                    .remove(&e.process)
                    .is_some_and(|at| at < struck && e.time_ns > struck);
                if across {
                    return true;
                }
            }
            _ => {}
        }
    }
    // A holder still holding when the run ended.
    granted.values().any(|&at| at < struck)
}

#[test]
fn shedlock_on_mariadb_with_client_time_ignores_the_servers_clock_jump() {
    if !java_adapters_built("shedlock_on_mariadb_with_client_time_ignores_the_servers_clock_jump") {
        return;
    }
    let (_report, dir) = expecting(run("java-shedlock-jdbc-mariadb-clock-jump"), Verdict::Valid);
    // The same jumps, but lock_until is computed and compared by the clients' clocks: valid,
    // with grants on both sides of the first jump (so the jump had a lock to break).
    assert_grants_around(&dir, F::Clock);
}

#[test]
fn a_java_adapter_refuses_an_unknown_init_key() {
    if !java_adapters_built("a_java_adapter_refuses_an_unknown_init_key") {
        return;
    }
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

#[test]
fn curator_tells_its_holder_lost_when_zookeeper_expired_its_session() {
    assert_zookeeper_library_told_lost("java-curator-mutex-session-expiry");
}

/// The JVM's performance-data files (`hsperfdata_<user>/<pid>` in the system temp folder) whose
/// modification time is `since` or later.
fn perf_data_files_since(since: std::time::SystemTime) -> Vec<std::path::PathBuf> {
    let tmp = std::env::temp_dir();
    let mut out = Vec::new();
    for dir in std::fs::read_dir(&tmp).into_iter().flatten().flatten() {
        if !dir.file_name().to_string_lossy().starts_with("hsperfdata_") {
            continue;
        }
        for file in std::fs::read_dir(dir.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let fresh = file
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t >= since);
            if fresh {
                out.push(file.path());
            }
        }
    }
    out
}

#[test]
fn a_java_adapter_run_writes_no_perf_data_file_outside_the_store() {
    if !java_adapters_built("a_java_adapter_run_writes_no_perf_data_file_outside_the_store") {
        return;
    }
    // Every JVM lockpick starts runs with -XX:-UsePerfData (the adapters' launchers, ZooKeeper):
    // a JVM writes its file at start and removes it only on a clean exit, so each adapter a run
    // stopped left one behind. Other tests' JVMs may run meanwhile, and are lockpick's too.
    let since = std::time::SystemTime::now();
    let (_, dir) = expecting(run("java-redisson-lease-baseline"), Verdict::Valid);
    assert_hello(&dir, "redisson", "3.");
    assert_eq!(
        perf_data_files_since(since),
        Vec::<std::path::PathBuf>::new()
    );
}

/// Pids of live processes whose command line contains `needle`, with the UDP sockets each has
/// open (`local address:port` in /proc's hex form, from its own network namespace's tables).
fn udp_sockets_of(needle: &str) -> Vec<(u32, Vec<String>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if !String::from_utf8_lossy(&cmdline).contains(needle) {
            continue;
        }
        let inodes: Vec<String> = std::fs::read_dir(entry.path().join("fd"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|fd| std::fs::read_link(fd.path()).ok())
            .filter_map(|l| {
                let l = l.to_string_lossy().into_owned();
                Some(l.strip_prefix("socket:[")?.strip_suffix(']')?.to_owned())
            })
            .collect();
        let mut udp = Vec::new();
        for table in ["net/udp", "net/udp6"] {
            let text = std::fs::read_to_string(entry.path().join(table)).unwrap_or_default();
            for line in text.lines().skip(1) {
                let fields: Vec<&str> = line.split_whitespace().collect();
                if fields.len() > 9 && inodes.iter().any(|i| i == fields[9]) {
                    udp.push(fields[1].to_owned());
                }
            }
        }
        out.push((pid, udp));
    }
    out
}

#[test]
fn the_redis_java_adapters_open_no_udp_socket() {
    let test = "the_redis_java_adapters_open_no_udp_socket";
    if !java_adapters_built(test) || !spring_adapters_built(test) {
        return;
    }
    // Netty's DNS resolver, the default of Redisson and of Lettuce (Spring Data Redis), opens
    // UDP sockets on the wildcard address at start; the adapters resolve with the JDK's resolver
    // instead, so a run's processes use loopback only. Watched while each run goes on.
    for (scenario, class) in [
        ("java-redisson-lease-baseline", "lockpick.RedissonAdapter"),
        (
            "java-spring-redis-registry-baseline",
            "lockpick.spring.RedisRegistryAdapter",
        ),
    ] {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let watcher = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut adapters = std::collections::BTreeSet::new();
                let mut udp = std::collections::BTreeSet::new();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    for (pid, sockets) in udp_sockets_of(class) {
                        adapters.insert(pid);
                        udp.extend(sockets.into_iter().map(|s| format!("pid {pid}: {s}")));
                    }
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                (adapters, udp)
            })
        };
        let (_, _dir) = expecting(run(scenario), Verdict::Valid);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let (adapters, udp) = watcher.join().unwrap();
        assert!(
            !adapters.is_empty(),
            "{scenario}: no {class} process was seen during the run"
        );
        assert!(
            udp.is_empty(),
            "{scenario}: {} UDP socket(s) of {class} (pid: local address, hex), e.g. {:?}",
            udp.len(),
            udp.iter().take(5).collect::<Vec<_>>()
        );
    }
}

#[test]
fn the_readme_java_first_adapter_is_the_file_in_the_repo_and_pins_its_versions() {
    let example = scenario_support::readme::repo().join("docs/examples/first-adapter/java");
    let source = std::fs::read_to_string(example.join("src/main/java/MyAdapter.java")).unwrap();
    assert_eq!(
        scenario_support::readme::first_adapter_blocks("java"),
        [source]
    );
    // Its helper is lockpick's, byte for byte (a link here; a copy in the reader's folder).
    assert_eq!(
        std::fs::read(example.join("protocol/lockpick/Protocol.java")).unwrap(),
        std::fs::read(
            scenario_support::readme::repo().join("clients/java/protocol/lockpick/Protocol.java")
        )
        .unwrap()
    );
    // Every version exact: no range, no LATEST or RELEASE.
    let pom = std::fs::read_to_string(example.join("pom.xml")).unwrap();
    for version in pom.split("<version>").skip(1) {
        let v = &version[..version.find('<').unwrap()];
        assert!(
            !v.contains(['[', '(', ',']) && v != "LATEST" && v != "RELEASE",
            "{v}"
        );
    }
}

#[test]
fn the_readme_java_first_adapter_runs_and_its_gc_pause_makes_a_double_holder() {
    let example = scenario_support::readme::repo().join("docs/examples/first-adapter/java");
    if !example.join("target/my-adapter.jar").is_file() {
        eprintln!(
            "SKIPPED: {}/target/my-adapter.jar is not built; run `bash scripts/setup` (JDK 17, Maven)",
            example.display()
        );
        return;
    }
    let path = example.join("scenario.toml");
    let (report, dir) = expecting(run(path.to_str().unwrap()), Verdict::Invalid);
    assert_hello(&dir, "lettuce-core", "6.8.2.RELEASE");
    assert_caused_by(double_holder(&report), F::Pause);
}
