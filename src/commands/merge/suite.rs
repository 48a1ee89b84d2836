//! The shards of one suite (`suite --shard K/N`) joined into one record: every shard's cases,
//! its runs' folders, the trend page and the JUnit file, as one suite run would have written
//! them. A shard not given becomes one error case naming it, so CI cannot pass without it.

use super::{collect, copy_run, fresh_folder, store_of, ShardOf};
use crate::cli::MergeArgs;
use crate::commands::suite::{ending, print_table, write_outputs};
use crate::outcome::{Failure, Outcome};
use lockpick_harness::matrix::Shard;
use lockpick_harness::run::utc_stamp;
use lockpick_reports::{
    read_suite_record, CaseStatus, SuiteCase, SuiteRecord, SUITE_DIR, SUITE_FILE,
};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// One shard's record as given.
struct ShardRecord {
    /// Its record's folder (`STORE/suite/<time>/`).
    dir: PathBuf,
    /// The store its runs' folders are relative to.
    store: PathBuf,
    shard: Shard,
    record: SuiteRecord,
}

impl ShardOf for ShardRecord {
    fn shard(&self) -> Shard {
        self.shard
    }
    fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Merges the suite shards in `given` (each a shard store, or its suite folder).
pub(super) fn merge_suite(given: &[PathBuf], args: &MergeArgs) -> Outcome {
    let (shards, missing) = collect(given, read_shard, check_same)?;
    let first = &shards[0];
    let n = first.shard.n;
    let mut record = SuiteRecord {
        started: utc_stamp(SystemTime::now()),
        // The shards ran side by side: the suite took as long as the longest.
        secs: shards.iter().map(|s| s.record.secs).fold(0.0, f64::max),
        command: without_shard(&first.record.command),
        interrupted: shards.iter().any(|s| s.record.interrupted),
        shard: None,
        missing_shards: Vec::new(),
        cases: Vec::new(),
        ..first.record.clone()
    };
    for s in &shards {
        for case in &s.record.cases {
            if let Some(rel) = &case.run {
                copy_run(&s.store, &args.store, rel)?;
            }
            record.cases.push(case.clone());
        }
    }
    record
        .cases
        .sort_by(|a, b| (&a.scenario, a.seed).cmp(&(&b.scenario, b.seed)));
    for missing in missing {
        eprintln!("lockpick: merge: suite shard {missing} was not given: its runs are missing");
        record.missing_shards.push(missing.to_string());
        record.cases.push(SuiteCase {
            scenario: format!("shard {missing}"),
            seed: 0,
            expected: String::new(),
            status: CaseStatus::Error,
            verdict: None,
            message: format!(
                "suite shard {missing} was not merged (its store was not given): its runs are missing, not passed"
            ),
            reproduce: format!("{} --shard {missing}", record.command),
            run: None,
            secs: 0.0,
            ops: 0,
        });
    }
    // The record's own folder name; reserve it so two merges in one second stay apart.
    let folder = fresh_folder(&args.store.join(SUITE_DIR), "merged")?;
    record.started = folder
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or(record.started);
    eprintln!(
        "lockpick: merged {} suite shard(s) of {n} into {}",
        shards.len(),
        folder.display()
    );
    print_table(&record);
    let ended = ending(&record);
    write_outputs(&args.store, args.junit.as_deref(), &record)?;
    ended
}

/// The shard in `given`: a shard store's newest suite record, or a suite folder.
fn read_shard(given: &Path) -> Result<ShardRecord, Failure> {
    let dir = if given.join(SUITE_FILE).is_file() {
        given.to_owned()
    } else {
        newest_record(&given.join(SUITE_DIR)).ok_or_else(|| {
            Failure::Usage(format!(
                "merge {}: no suite record there; allowed: a shard's store (with suite/<time>/{SUITE_FILE}) or that folder",
                given.display()
            ))
        })?
    };
    let path = dir.join(SUITE_FILE);
    let record = read_suite_record(&path).map_err(Failure::RunFolder)?;
    let shard = record
        .shard
        .as_deref()
        .ok_or_else(|| {
            Failure::Usage(format!(
                "merge {}: this suite was not run as a shard (no --shard); allowed: the records `suite --shard K/N` wrote",
                dir.display()
            ))
        })?
        .parse::<Shard>()
        .map_err(|e| Failure::Usage(format!("merge: read {}: shard {e}", path.display())))?;
    let store = store_of(&dir, SUITE_DIR)?;
    Ok(ShardRecord {
        dir,
        store,
        shard,
        record,
    })
}

/// The newest folder under `root` that holds a suite record.
fn newest_record(root: &Path) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(SUITE_FILE).is_file())
        .collect();
    dirs.sort();
    dirs.pop()
}

/// Refuses a shard of another suite than `first`'s, in a sentence naming both.
fn check_same(first: &ShardRecord, s: &ShardRecord) -> Result<(), Failure> {
    let differs = |what: String| {
        Failure::Usage(format!(
            "merge: suite shard {} ({}) has {what} than suite shard {} ({}); allowed: the shards of one `suite --shard` run",
            s.shard,
            s.dir.display(),
            first.shard,
            first.dir.display()
        ))
    };
    if s.record.lockpick_version != first.record.lockpick_version {
        return Err(differs(format!(
            "another lockpick ({} rather than {})",
            s.record.lockpick_version, first.record.lockpick_version
        )));
    }
    if s.record.seeds != first.record.seeds {
        return Err(differs(format!(
            "other seeds ({} rather than {} per scenario)",
            s.record.seeds, first.record.seeds
        )));
    }
    if s.shard.n != first.shard.n {
        return Err(differs(format!(
            "another shard count ({} rather than {})",
            s.shard.n, first.shard.n
        )));
    }
    if without_shard(&s.record.command) != without_shard(&first.record.command) {
        return Err(differs(format!(
            "another suite (`{}` rather than `{}`)",
            without_shard(&s.record.command),
            without_shard(&first.record.command)
        )));
    }
    Ok(())
}

/// A suite's command line without its `--shard K/N`.
fn without_shard(command: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let mut words = command.split(' ');
    while let Some(w) = words.next() {
        if w == "--shard" {
            words.next();
        } else {
            out.push(w);
        }
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::without_shard;

    #[test]
    fn the_shard_is_cut_from_the_command() {
        assert_eq!(
            without_shard("cargo run -- suite --seeds 3 --shard 2/4 --filter redis"),
            "cargo run -- suite --seeds 3 --filter redis"
        );
    }
}
