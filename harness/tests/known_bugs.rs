//! One pair of the known-bug catalogue (scenarios/known-bugs/) run end to end, as `lockpick
//! suite --filter known-bugs` runs it: ShedLock PR #244, the release with the bug (4.9.2) and
//! the release with its fix (4.9.3) on the same scenario and seed. The pair with no fault at
//! all, so the verdicts can only come from the library's own statements. Skips, saying so on
//! stderr, only when the pinned adapter is not built (`bash scripts/setup` builds it; it needs a
//! JDK 17 and Maven).

mod scenario_support;

use lockpick_checker::verdict::Verdict;
use scenario_support::{double_holder, expecting, maven_built, run};
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
