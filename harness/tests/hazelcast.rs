//! Hazelcast's FencedLock (clients/java/hazelcast) on lockpick's `hazelcast` members (CP
//! Subsystem on three members, every member and client link through the proxy), run as
//! `lockpick scenario` runs them: the positive control's baseline and its partition, each
//! VALID on a resource that checks the fence, and its twin with the CP Subsystem off, INVALID
//! under a split. Each test skips, saying SKIPPED and how to build,
//! only when the adapter's jar or the members' jar is not built (`bash scripts/setup`).

mod scenario_support;

use lockpick_checker::history::{EventKind, F};
use lockpick_checker::lock::FindingKind;
use lockpick_checker::verdict::Verdict;
use scenario_support::{assert_hello, expecting, history, maven_built, run};

/// True when the adapter's and the members' jars are there; otherwise says loudly why not.
fn hazelcast_built(test: &str) -> bool {
    maven_built(
        test,
        &[
            "clients/java/hazelcast/target/lockpick-adapter.jar".to_owned(),
            "servers/hazelcast-5.4/target/lib/hazelcast-5.4.0.jar".to_owned(),
        ],
    )
}

#[test]
fn cp_fenced_lock_baseline_is_valid_and_names_hazelcast() {
    if !hazelcast_built("cp_fenced_lock_baseline_is_valid_and_names_hazelcast") {
        return;
    }
    let (report, dir) = expecting(run("hazelcast-cp-fenced-baseline"), Verdict::Valid);
    assert_hello(&dir, "hazelcast", "5.4.");
    // Every grant carries the lock's fence, each larger than the one before.
    let fences: Vec<u64> = history(&dir)
        .iter()
        .filter(|e| e.f == F::Acquire && e.kind == EventKind::Ok)
        .map(|e| e.value.token.expect("FencedLock grants carry a fence"))
        .collect();
    assert!(fences.len() > 20, "{report}");
    assert!(fences.windows(2).all(|w| w[0] < w[1]), "{fences:?}");
}

#[test]
fn cp_fenced_lock_stays_valid_when_a_member_is_cut_off() {
    if !hazelcast_built("cp_fenced_lock_stays_valid_when_a_member_is_cut_off") {
        return;
    }
    let (_report, dir) = expecting(run("hazelcast-cp-fenced-partition"), Verdict::Valid);
    // The cut was made at the member links' proxies and healed.
    let events = history(&dir);
    assert!(events.iter().any(|e| e.f == F::Partition), "no cut");
    assert!(events.iter().any(|e| e.f == F::Heal), "no heal");
}

#[test]
fn unsafe_mode_gives_the_lock_to_both_sides_of_a_split() {
    if !hazelcast_built("unsafe_mode_gives_the_lock_to_both_sides_of_a_split") {
        return;
    }
    // The same calls with the CP Subsystem off: once the cut-off member and the other two
    // call each other gone, each side owns the lock's partition and grants it to the clients
    // that talk to it, each from its own fence counter.
    let (report, dir) = expecting(run("hazelcast-unsafe-partition"), Verdict::Invalid);
    assert!(
        (report.violations.iter()).any(|f| f.kind == FindingKind::DoubleHolder),
        "{report}"
    );
    let fences: Vec<u64> = history(&dir)
        .iter()
        .filter(|e| e.f == F::Acquire && e.kind == EventKind::Ok)
        .filter_map(|e| e.value.token)
        .collect();
    assert!(
        fences.windows(2).any(|w| w[1] < w[0]),
        "one fence sequence, no split: {fences:?}"
    );
}
