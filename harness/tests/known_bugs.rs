//! Pairs of the known-bug catalogue (scenarios/known-bugs/) run end to end, one per language
//! that has one, as `lockpick suite --filter known-bugs` runs them: the release with the bug
//! and the release with its fix on the same scenario and seed. Java: ShedLock PR #244 (4.9.2,
//! 4.9.3), with no fault at all, so the verdicts can only come from the library's own
//! statements. Rust: rslock PR #9 (0.2.2, 0.3.0) under cuts of one master. Each skips, saying
//! so on stderr, only when its pinned adapters are not built (`bash scripts/setup` builds
//! them; ShedLock needs a JDK 17 and Maven).

mod scenario_support;

use lockpick_checker::verdict::Verdict;
use scenario_support::{built, double_holder, expecting, maven_built, run};
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
