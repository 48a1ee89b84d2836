//! Bug-and-fix pairs of the known-bug catalogue (scenarios/known-bugs/) run end to end, as
//! `lockpick suite --filter known-bugs` runs them: the release with the bug and the release
//! with its fix on the same scenario and seed. Java: ShedLock PR #244 (4.9.2, 4.9.3), with no
//! fault at all, so the verdicts can only come from the library's own statements. Rust: rslock
//! PR #9 (0.2.2, 0.3.0) under cuts of one master. Go: redsync PR #61 (v4.0.3, v4.0.4) under
//! pauses of its one Redis server, and PR #151 (v4.12.0, v4.12.1) under crashes of one of five
//! masters. Each skips, saying so on stderr, only when its pinned adapters are not built (`bash
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

/// Runs the known-bug scenario `scenario` of redsync at `release`, expecting `want`, and
/// returns its report and history after checking its hello names that release; `None` (said
/// loudly) when that build is not there.
fn redsync_run(
    test: &str,
    release: &str,
    scenario: &str,
    want: Verdict,
) -> Option<(lockpick_checker::lock::LockReport, Vec<Event>)> {
    let bin = format!("clients/go/redsync/bin/redsync@{release}");
    if !built(
        test,
        &[bin],
        "it builds the Go adapters and their pinned releases",
    ) {
        return None;
    }
    let (report, dir) = expecting(run(&format!("{scenario}-{release}")), want);
    let said = hello(&dir);
    assert!(
        said.contains("\"library\":\"github.com/go-redsync/redsync/v4\"")
            && said.contains(&format!("\"version\":\"v{release}\"")),
        "{said}"
    );
    Some((report, scenario_support::history(&dir)))
}

/// The first renewal that came back ok although another process had been granted the lock
/// after the renewing one, and had not released it yet: only a lie can do that on one Redis,
/// where a grant means the earlier holder's key was gone. As (renewing process, rival).
fn renewal_under_a_rival(history: &[Event]) -> Option<(u64, u64)> {
    // Per client process: when it was last granted, and whether it has released since.
    let mut granted: BTreeMap<u64, (u64, bool)> = BTreeMap::new();
    for e in history {
        let Process::Client(p) = e.process else {
            continue;
        };
        match (e.f, e.kind) {
            (F::Acquire, EventKind::Ok) => {
                granted.insert(p, (e.time_ns, false));
            }
            (F::Release, EventKind::Invoke) => {
                if let Some(g) = granted.get_mut(&p) {
                    g.1 = true;
                }
            }
            (F::Renew, EventKind::Ok) => {
                let Some(&(own, _)) = granted.get(&p) else {
                    continue;
                };
                let rival = granted
                    .iter()
                    .find(|(q, (at, released))| **q != p && *at > own && !released);
                if let Some((q, _)) = rival {
                    return Some((p, *q));
                }
            }
            _ => {}
        }
    }
    None
}

// PR #61: each release its own test, so the pair's two scenarios run side by side.
#[test]
fn redsync_pr_61_extends_a_lock_taken_by_another_in_4_0_3() {
    // After a pause of the server longer than the lease, the holder's Extend runs on a key a
    // rival now holds; the touch script answers 0, which 4.0.3 compares with "ERR", so Extend
    // succeeds and the holder keeps believing beside the rival. Not luck: 58 of the 60 pauses
    // of seeds 1-10 were followed by such an Extend, so a run of six with none has a chance of
    // at most 0.116^6 = 2e-6 (the 95% upper bound of a pause's miss rate, 2/60).
    let test = "redsync_pr_61_extends_a_lock_taken_by_another_in_4_0_3";
    let scenario = "redsync-61-server-pause";
    let Some((report, history)) = redsync_run(test, "4.0.3", scenario, Verdict::Invalid) else {
        return;
    };
    double_holder(&report);
    assert!(
        renewal_under_a_rival(&history).is_some(),
        "no renewal came back ok under a rival's grant: {report}"
    );
}

#[test]
fn redsync_pr_61_fails_the_extend_of_a_lock_taken_by_another_in_4_0_4() {
    // The same scenario; the touch script's 0 fails the Extend, and the holder is told it lost
    // the lock.
    let test = "redsync_pr_61_fails_the_extend_of_a_lock_taken_by_another_in_4_0_4";
    let scenario = "redsync-61-server-pause";
    let Some((report, history)) = redsync_run(test, "4.0.4", scenario, Verdict::Valid) else {
        return;
    };
    assert_eq!(renewal_under_a_rival(&history), None, "{report}");
    assert!(
        history.iter().any(|e| e.f == F::Renew
            && e.kind == EventKind::Fail
            && e.error.as_deref().is_some_and(|r| r.starts_with("lost"))),
        "no Extend failed after a pause: {report}"
    );
    assert_eq!(report.stats.max_concurrent_holders, 1, "{report}");
}

/// The first grant to a process while another's lease, as its last renewal (ok, sent at its
/// invoke) extended it by `lease_ms`, still ran, and that other had not released: on Redlock,
/// a majority granted twice. As (renewing process, rival).
fn grant_inside_a_renewed_lease(history: &[Event], lease_ms: u64) -> Option<(u64, u64)> {
    // Per client process holding: when its last renewal was sent, if it came back ok.
    let mut renewed: BTreeMap<u64, u64> = BTreeMap::new();
    let mut sent: BTreeMap<u64, u64> = BTreeMap::new();
    for e in history {
        let Process::Client(p) = e.process else {
            continue;
        };
        match (e.f, e.kind) {
            (F::Renew, EventKind::Invoke) => {
                sent.insert(p, e.time_ns);
            }
            (F::Renew, EventKind::Ok) => {
                renewed.insert(p, sent.get(&p).copied().unwrap_or(e.time_ns));
            }
            // A failed or unknown Extend does not end the lease the last good one renewed on
            // the servers (4.12.0's own clean-up does, which is the bug): only a release does.
            (F::Release, EventKind::Invoke) => {
                renewed.remove(&p);
            }
            (F::Acquire, EventKind::Ok) => {
                let inside = (renewed.iter())
                    .find(|(q, at)| **q != p && **at + lease_ms * 1_000_000 > e.time_ns);
                if let Some((q, _)) = inside {
                    return Some((*q, p));
                }
                renewed.remove(&p);
            }
            _ => {}
        }
    }
    None
}

/// Whether a renewal came back ok while a node was down (between a crash and its restart).
fn renewed_while_a_node_was_down(history: &[Event]) -> bool {
    let mut down = false;
    history.iter().any(|e| {
        match (e.process, e.f) {
            (Process::Nemesis, F::Crash) => down = true,
            (Process::Nemesis, F::Restart) => down = false,
            _ => {}
        }
        down && e.f == F::Renew && e.kind == EventKind::Ok
    })
}

// PR #151: each release its own test, as for PR #61.
#[test]
fn redsync_pr_151_deletes_the_keys_of_a_lock_it_extends_in_4_12_0() {
    // An Extend that meets the killed master gets an error there, and 4.12.0's touch answers
    // it by releasing the lock on every master, after the four live ones extended it: Extend
    // returns true with the keys gone, and the other client's next try takes four. Not luck:
    // 57 of the 60 crashes of seeds 1-10 were followed by such a grant, so a run of six with
    // none has a chance of at most 0.14^6 = 7e-6 (the 95% upper bound of a crash's miss rate,
    // 3/60).
    let test = "redsync_pr_151_deletes_the_keys_of_a_lock_it_extends_in_4_12_0";
    let scenario = "redsync-151-node-crash";
    let Some((report, history)) = redsync_run(test, "4.12.0", scenario, Verdict::Invalid) else {
        return;
    };
    double_holder(&report);
    assert!(
        grant_inside_a_renewed_lease(&history, 3000).is_some(),
        "no grant inside a renewed lease: {report}"
    );
}

#[test]
fn redsync_pr_151_keeps_the_keys_of_a_lock_it_extends_in_4_12_1() {
    // The same crashes; the Extend counts the dead master as one lost vote and keeps the lock
    // on the other four.
    let test = "redsync_pr_151_keeps_the_keys_of_a_lock_it_extends_in_4_12_1";
    let scenario = "redsync-151-node-crash";
    let Some((report, history)) = redsync_run(test, "4.12.1", scenario, Verdict::Valid) else {
        return;
    };
    assert_eq!(
        grant_inside_a_renewed_lease(&history, 3000),
        None,
        "{report}"
    );
    assert!(
        renewed_while_a_node_was_down(&history),
        "no Extend met the dead master: {report}"
    );
    assert_eq!(report.stats.max_concurrent_holders, 1, "{report}");
}
