//! The Rust adapters (clients/rust: rslock) in whole runs, as `lockpick scenario` runs them:
//! rslock's Redlock over five masters cannot save a stopped process, and its best-effort release
//! answers ok for the lock the woken holder lost. The adapter's binary must be built (`bash
//! scripts/setup`); without it the test fails and says so.

mod scenario_support;

use lockpick_checker::history::{EventKind, Process, F};
use lockpick_checker::verdict::Verdict;
use scenario_support::{assert_caused_by, double_holder, expecting, history, run};
use std::path::Path;

#[test]
fn rslock_redlock_over_five_masters_cannot_save_a_stopped_process() {
    let binary = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../clients/rust/rslock/target/release/lockpick-adapter-rslock");
    assert!(
        binary.is_file(),
        "{} is missing: run `bash scripts/setup`",
        binary.display()
    );
    let (report, dir) = expecting(run("rust-rslock-gc-pause"), Verdict::Invalid);
    let hello = std::fs::read_to_string(dir.join("clients/hello.json")).unwrap();
    // The version comes from the adapter's Cargo.lock (its build script), not its source.
    assert!(
        hello.contains("\"library\":\"rslock\"") && hello.contains("\"version\":\"0."),
        "{hello}"
    );
    let finding = double_holder(&report);
    assert_caused_by(finding, F::Pause);
    // rslock's release is best effort and returns nothing: the woken holder's release is ok,
    // though every master's key had expired or held another client's value.
    let stale = Process::Client(finding.processes[0]);
    let woke = finding.window.expect("a double holder has a window").end_ns;
    assert!(
        history(&dir).iter().any(|e| e.process == stale
            && e.f == F::Release
            && e.kind == EventKind::Ok
            && e.time_ns >= woke),
        "the stopped holder's release is ok after it woke: {report}"
    );
}
