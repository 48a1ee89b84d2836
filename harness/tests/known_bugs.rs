//! Bug-and-fix pairs of the known-bug catalogue (scenarios/known-bugs/) run end to end, as
//! `lockpick suite --filter known-bugs` runs them: the release with the bug and the release
//! with its fix on the same scenario and seed, one pair per language (the catalogue has more;
//! one each keeps CI within its time). Java: ShedLock PR #244 (4.9.2, 4.9.3), with no fault at
//! all, so the verdicts can only come from the library's own statements. Rust: rslock PR #9
//! (0.2.2, 0.3.0) under cuts of one master. Go: etcd #11456 (etcd's client at v3.4.3 and at
//! v3.5.0, the first fixed release) under cuts of every client. Python: redis-py #415 (2.9.1,
//! 2.10.0) under stops inside releases. Each skips, saying so on stderr, only when its pinned adapters are not built (`bash
//! scripts/setup` builds them; ShedLock needs a JDK 17 and Maven).

mod scenario_support;

use lockpick_checker::history::{Event, EventKind, Process, F};
use lockpick_checker::verdict::Verdict;
use scenario_support::{built, double_holder, expecting, maven_built, run};
use std::collections::BTreeMap;
use std::path::Path;

/// True when both ShedLock 4.9 builds are there; otherwise says loudly why the test does
/// nothing.
fn shedlock_49_built(test: &str) -> bool {
    // The releases clients/java/shedlock-jdbc/pinned-releases lists, each built into its own
    // target/<release>/.
    let jars: Vec<String> = (["4.9.2", "4.9.3"].iter())
        .map(|r| format!("clients/java/shedlock-jdbc/target/{r}/lockpick-adapter.jar"))
        .collect();
    maven_built(test, &jars)
}

/// The library and version the adapters said in their hello.
fn hello(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("clients/hello.json")).expect("clients/hello.json")
}

#[test]
fn shedlock_pr_244_grants_a_held_lock_in_4_9_2_and_not_in_4_9_3() {
    if !shedlock_49_built("shedlock_pr_244_grants_a_held_lock_in_4_9_2_and_not_in_4_9_3") {
        return;
    }
    // 4.9.2: usingDbTime()'s UPDATE has no name filter, so a contender's UPDATE matches the
    // other, expired lock row and ShedLock answers "locked" while the lock is held.
    let (report, dir) = expecting(run("shedlock-244-affected-4.9.2"), Verdict::Invalid);
    let hello_affected = hello(&dir);
    assert!(
        hello_affected.contains("\"library\":\"shedlock-provider-jdbc-template\"")
            && hello_affected.contains("\"version\":\"4.9.2\""),
        "{hello_affected}"
    );
    let finding = double_holder(&report);
    assert!(
        finding.faults.is_empty(),
        "the scenario has no fault: the library alone made two holders: {finding:?}"
    );

    // 4.9.3: the same scenario, statements with the name filter.
    let (report, dir) = expecting(run("shedlock-244-fixed-4.9.3"), Verdict::Valid);
    let hello_fixed = hello(&dir);
    assert!(
        hello_fixed.contains("\"version\":\"4.9.3\""),
        "{hello_fixed}"
    );
    assert!(report.stats.acquires_ok > 10, "{report}");
    assert_eq!(report.stats.max_concurrent_holders, 1, "{report}");
}

/// True when both rslock builds are there; otherwise says loudly why the test does nothing.
fn rslock_pair_built(test: &str) -> bool {
    let bins: Vec<String> = (["0.2.2", "0.3.0"].iter())
        .map(|r| format!("clients/rust/rslock-{r}/target/release/lockpick-adapter-rslock"))
        .collect();
    built(test, &bins, "it builds the Rust adapters with cargo")
}

#[test]
fn rslock_pr_9_grants_a_lock_whose_keys_expired_in_0_2_2_and_not_in_0_3_0() {
    if !rslock_pair_built("rslock_pr_9_grants_a_lock_whose_keys_expired_in_0_2_2_and_not_in_0_3_0")
    {
        return;
    }
    // 0.2.2: a try held past the TTL by a cut master wraps the validity (a usize) to near
    // 2^64, and the grant of keys that already expired elsewhere comes back as valid. Not
    // luck: each of the run's ten cuts ended with two holders in 80 of 100 cuts measured
    // (seeds 1-10), so a run with none has a chance of about 0.2^10 (at most 0.29^10 = 5e-6
    // at the 95% upper bound of a cut's miss rate).
    let (report, dir) = expecting(run("rslock-9-partition-0.2.2"), Verdict::Invalid);
    let hello_affected = hello(&dir);
    assert!(
        hello_affected.contains("\"library\":\"rslock\"")
            && hello_affected.contains("\"version\":\"0.2.2\""),
        "{hello_affected}"
    );
    double_holder(&report);
    let history = scenario_support::history(&dir);
    assert!(
        history
            .iter()
            .any(|e| e.value.lease_ms.is_some_and(|l| l > u64::MAX / 2)),
        "no grant with a wrapped validity"
    );

    // 0.3.0: the same scenario; a try that outlasts the TTL is refused (TtlExceeded).
    let (report, dir) = expecting(run("rslock-9-partition-0.3.0"), Verdict::Valid);
    assert!(
        hello(&dir).contains("\"version\":\"0.3.0\""),
        "{}",
        hello(&dir)
    );
    assert!(report.stats.acquires_ok > 10, "{report}");
    assert_eq!(report.stats.max_concurrent_holders, 1, "{report}");
}

/// Runs etcd #11456's scenario with etcd's Go client at `release` (`3.4.3`, `3.5.0`) on
/// `seed`, expecting `want`, after checking the pinned build is there (`None`, said loudly,
/// when not); returns the history, the report's text, and checks the hello names `module` at
/// `version`.
fn etcd_11456_run(
    test: &str,
    release: &str,
    seed: u64,
    want: Verdict,
    (module, version): (&str, &str),
) -> Option<(Vec<Event>, String)> {
    let bin = format!("clients/go/etcdmutex/bin/etcdmutex@{release}");
    if !built(
        test,
        &[bin],
        "it builds the Go adapters and their pinned releases",
    ) {
        return None;
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let name = format!("etcd-11456-client-{release}");
    let run = scenario_support::run_in(&rt, &name, 20, |o| o.seed = Some(seed));
    let (report, dir) = expecting(run, want);
    let said = hello(&dir).replace(' ', "");
    assert!(
        said.contains(&format!("\"library\":\"{module}\""))
            && said.contains(&format!("\"version\":\"{version}\"")),
        "{said}"
    );
    if want == Verdict::Invalid {
        double_holder(&report);
    }
    Some((scenario_support::history(&dir), report.to_string()))
}

// etcd #11456: each release its own test, so the pair's two scenarios run side by side.
#[test]
fn etcd_11456_grants_waiters_whose_keys_are_gone_in_3_4_3() {
    // 3.4.3's Mutex.Lock returns as soon as the keys before its own are deleted, without
    // checking its own still exists: a cut of every client past the 1 s session expires every
    // waiter's lease, and on the heal all of them are granted at once. Not luck: each of the
    // 90 cuts of seeds 1-10 in three suite runs (2026-11-30, stores kb, kb7, kb9) was
    // followed by double holders (3-9 each), so a run's three cuts with none has a chance of
    // at most 0.033^3 = 3.6e-5 (the 95% upper bound of a cut's miss rate, 0 of 90).
    let test = "etcd_11456_grants_waiters_whose_keys_are_gone_in_3_4_3";
    // The 3.4 line has no /v3 module: the tag's commit, by its pseudo-version.
    let module = ("go.etcd.io/etcd", "v0.0.0-20191023171146-3cf2f69b5738");
    etcd_11456_run(test, "3.4.3", 1, Verdict::Invalid, module);
}

#[test]
fn etcd_11456_refuses_a_waiter_whose_session_expired_in_3_5_0() {
    // 3.5.0, the first release with the fix: the same cuts, and a waiter whose session
    // expired is refused (session-expired) instead of granted. Such a refusal is what makes a
    // VALID say something: 60 of the 72 cuts of 20 runs measured were followed by one, so a
    // run's three cuts with none has a chance of about (12/72)^3 = 0.005 (0.018 at the 95%
    // upper bound of a cut's miss rate, 0.26); such a run tested nothing and is passed over
    // for the next seed, and three in a row have a chance of at most 6e-6. Every run must be
    // VALID.
    let test = "etcd_11456_refuses_a_waiter_whose_session_expired_in_3_5_0";
    for seed in 1..=3 {
        let module = ("go.etcd.io/etcd/client/v3", "v3.5.0");
        let Some((history, _)) = etcd_11456_run(test, "3.5.0", seed, Verdict::Valid, module) else {
            return;
        };
        let refused = history.iter().any(|e| {
            e.f == F::Acquire
                && e.kind == EventKind::Fail
                && e.error.as_deref() == Some("session-expired")
        });
        if refused {
            return;
        }
        eprintln!("{test}: 3.5.0 seed {seed}: no waiter was refused session-expired; next seed");
    }
    panic!("{test}: in 3 seeds no 3.5.0 waiter was refused session-expired, so the VALIDs tested nothing");
}

/// The first release of `outcome` (`Ok`, or `Fail` with `not-owner`) by a process after
/// another process was granted the lock since the releasing one's own grant, the rival not
/// having invoked its release yet: on one Redis, such a grant means the releasing process's
/// key was gone, so an `ok` deleted the rival's key and a `not-owner` refused to. As (releasing
/// process, rival).
fn release_after_rival(history: &[Event], outcome: EventKind) -> Option<(u64, u64)> {
    let mut granted: BTreeMap<u64, u64> = BTreeMap::new(); // process -> its grant's index
    let mut releasing: BTreeMap<u64, u64> = BTreeMap::new(); // process -> its release's invoke
    for e in history {
        let Process::Client(p) = e.process else {
            continue;
        };
        match (e.f, e.kind) {
            (F::Acquire, EventKind::Ok) => {
                granted.insert(p, e.index);
                releasing.remove(&p);
            }
            (F::Release, EventKind::Invoke) => {
                releasing.insert(p, e.index);
            }
            (F::Release, kind) if kind == outcome => {
                let refused = kind != EventKind::Fail
                    || (e.error.as_deref())
                        .is_some_and(|r| r.split(':').next() == Some("not-owner"));
                let mine = granted.get(&p).copied();
                let rival = (granted.iter()).find(|&(&q, &at)| {
                    q != p && mine.is_some_and(|m| at > m) && !releasing.contains_key(&q)
                });
                if let (true, Some((&q, _))) = (refused, rival) {
                    return Some((p, q));
                }
            }
            _ => {}
        }
    }
    None
}

fn redis_py_run(
    test: &str,
    release: &str,
    seed: u64,
    want: Verdict,
) -> Option<(Vec<Event>, String)> {
    let bin = format!("clients/python/redis_py2/bin/redis-py2@{release}");
    let venv = format!("clients/python/pinned/redis-{release}/.venv/bin/python");
    if !built(test, &[bin, venv], "it makes the pinned releases' venvs") {
        return None;
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let name = format!("redis-py-415-release-pause-{release}");
    let run = scenario_support::run_in(&rt, &name, 20, |o| o.seed = Some(seed));
    let (report, dir) = expecting(run, want);
    let said = hello(&dir).replace(' ', "");
    assert!(
        said.contains("\"library\":\"redis\"")
            && said.contains(&format!("\"version\":\"{release}\"")),
        "{said}"
    );
    Some((scenario_support::history(&dir), report.to_string()))
}

#[test]
fn redis_py_415_deletes_the_next_holders_key_in_2_9_1_and_not_in_2_10_0() {
    let test = "redis_py_415_deletes_the_next_holders_key_in_2_9_1_and_not_in_2_10_0";
    // 2.9.1: a release stopped between its GET and its DEL, past the 1 s lease, deletes the
    // key of the client granted meanwhile (the timestamps compare passes), and a third is
    // granted beside it. Not luck: every run of seeds 1-10 had 53-100 double holders.
    let Some((history, report)) = redis_py_run(test, "2.9.1", 1, Verdict::Invalid) else {
        return;
    };
    assert!(
        release_after_rival(&history, EventKind::Ok).is_some(),
        "no release came back ok after a rival's grant: {report}"
    );
    // 2.10.0: the same stops; a release stopped before its script finds the key another's and
    // fails not-owner, deleting nothing. Such a release is what makes a VALID say something:
    // 3-9 a run in seeds 1-10 (60 in all). A run with none tested nothing and is passed over
    // for the next seed; two in a row with none, at the measured mean of 6 a run (as a Poisson
    // count: e^-6 each), has a chance of 6e-6. Every run must be VALID.
    for seed in 1..=2 {
        let Some((history, _)) = redis_py_run(test, "2.10.0", seed, Verdict::Valid) else {
            return;
        };
        if release_after_rival(&history, EventKind::Fail).is_some() {
            return;
        }
        eprintln!("{test}: 2.10.0 seed {seed}: no release stopped before its script met a rival's grant; next seed");
    }
    panic!("{test}: in 2 seeds no 2.10.0 release stopped before its script met a rival's grant, so the VALIDs tested nothing");
}
