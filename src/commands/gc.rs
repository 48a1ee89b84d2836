//! `lockpick gc`: frees the node data of finished and abandoned runs and the libfaketime
//! files killed nodes left in /dev/shm; prints what it freed.

use crate::outcome::{Exit, Failure, Outcome};
use std::path::Path;

pub(super) fn gc(store: &Path) -> Outcome {
    if !store.is_dir() {
        return Err(Failure::Usage(format!(
            "read the store {}: not a folder",
            store.display()
        )));
    }
    let report = lockpick_store::gc::collect(store);
    for (path, bytes) in &report.removed {
        outln!("removed {} ({})", path.display(), mib(*bytes));
    }
    for path in &report.temp_files {
        outln!("removed {} (left by an interrupted write)", path.display());
    }
    for path in &report.running {
        outln!("kept {} (its lockpick is still running)", path.display());
    }
    let shm = lockpick_harness::processes::faketime::clean_stale_shm();
    outln!(
        "freed {} in {} node data folders; removed {shm} stale libfaketime files from /dev/shm",
        mib(report.freed_bytes()),
        report.removed.len()
    );
    for e in &report.errors {
        eprintln!("lockpick: failed to clean {e}");
    }
    if report.errors.is_empty() {
        Ok(Exit::Done)
    } else {
        Err(Failure::harness(format!(
            "clean {} of the store's files (listed above)",
            report.errors.len()
        )))
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}
