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
        // Runs the whole suite again, into the merged store.
        command: format!(
            "{}{}",
            without_shard_and_store(&first.record.command),
            crate::reproduce::store_flag(&args.store)
        ),
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
    // The merge's --markdown is the matrix's: a merged suite writes none.
    write_outputs(&args.store, args.junit.as_deref(), None, &record)?;
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
    if suite_arguments(&s.record.command) != suite_arguments(&first.record.command) {
        return Err(differs(format!(
            "another suite (`{}` rather than `{}`)",
            suite_arguments(&s.record.command),
            suite_arguments(&first.record.command)
        )));
    }
    Ok(())
}

/// A suite's command line without its `--shard K/N` and `--store DIR`: each shard ran on a
/// machine, and into a store, of its own.
fn without_shard_and_store(command: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let mut words = command.split(' ');
    while let Some(w) = words.next() {
        if w == "--shard" || w == "--store" {
            // The value, one shell word: quoted when it holds a space (see store_flag).
            let mut value = words.next().unwrap_or_default();
            if value.starts_with('\'') {
                while !(value.len() > 1 && value.ends_with('\'')) {
                    match words.next() {
                        Some(more) => value = more,
                        None => break,
                    }
                }
            }
        } else {
            out.push(w);
        }
    }
    out.join(" ")
}

/// What the shards of one suite agree on: its arguments, not the program that ran each
/// (`cargo run --` on one machine, an installed binary on another) nor its store or shard.
fn suite_arguments(command: &str) -> String {
    let command = without_shard_and_store(command);
    match command.find(" suite ") {
        Some(at) => command[at + 1..].to_owned(),
        None => command,
    }
}

#[cfg(test)]
mod tests {
    use super::{suite_arguments, without_shard_and_store};

    #[test]
    fn the_shard_and_the_store_are_cut_from_the_command() {
        assert_eq!(
            without_shard_and_store(
                "cargo run -- suite --seeds 3 --shard 2/4 --filter redis --store /m/s2"
            ),
            "cargo run -- suite --seeds 3 --filter redis"
        );
        assert_eq!(
            without_shard_and_store("lockpick suite --seeds 3 --store 'my runs' --shard 1/2"),
            "lockpick suite --seeds 3"
        );
    }

    #[test]
    fn shards_of_one_suite_agree_whatever_program_and_store_ran_them() {
        assert_eq!(
            suite_arguments("cargo run -- suite --seeds 3 --shard 1/2 --store /a"),
            suite_arguments("/usr/local/bin/lockpick suite --seeds 3 --shard 2/2 --store /b")
        );
        assert_ne!(
            suite_arguments("lockpick suite --seeds 3"),
            suite_arguments("lockpick suite --seeds 4")
        );
    }
}
