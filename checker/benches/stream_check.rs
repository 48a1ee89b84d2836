//! Times `check` of generated lock histories: 8 processes taking turns on one lock, and 64
//! processes over 16 lock names, at 1M, 10M and 100M events, written to a temporary file and
//! checked in one streaming pass; prints per case the events, the wall and CPU time of the
//! check (and of reading alone, for scale) and the peak RSS (VmHWM, reset before each case).
//!
//! `cargo bench -p lockpick-checker --bench stream_check` runs the 1M and 10M cases;
//! `-- 1M` (or `10M`, `locks`) filters cases by name. The 100M cases (12 GB of history each in
//! the temporary directory, a few minutes) run only when named: `-- 100M` runs both,
//! `-- '100M events, 8'` one. `-- --dump DIR` also writes each case's results, timings zeroed,
//! to DIR, to compare two builds byte for byte. `-- --write PATH EVENTS [PROCESSES [LOCKS]]`
//! only writes a history, to time the binary on it (`/usr/bin/time -v lockpick check PATH`),
//! and `--fenced` checks without linearizability (no lock model fits).

#[path = "support/generate.rs"]
mod generate;

use generate::{write_history, Shape};
use lockpick_checker::history::HistoryReader;
use lockpick_checker::lock::{LockCheckParams, Property};
use lockpick_checker::run_checks::{check_run_file, FileChecks};
use lockpick_checker::verdict::Verdict;
use std::io::BufWriter;
use std::path::Path;
use std::time::Instant;

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

/// Starts the peak RSS over from what the process holds now, so each case reports its own.
fn reset_peak_rss() {
    // Linux: writing 5 to clear_refs resets VmHWM; elsewhere the peak is the process's.
    std::fs::write("/proc/self/clear_refs", "5").ok();
}

/// CPU time (user + system) this process has used, in seconds: unlike wall time, it does not
/// grow when other work shares the machine.
fn cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which ends with ')'): utime and stime are the 12th and
    // 13th, in clock ticks (100 per second on Linux).
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

fn write(path: &Path, shape: Shape) -> u64 {
    let file = std::fs::File::create(path).expect("create the history file");
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let n = write_history(shape, &mut out).expect("write the history");
    std::io::Write::flush(&mut out).expect("flush the history");
    n
}

/// Writes what `check_run_file` found, with the linearizability check's time zeroed (the
/// only field that differs between two runs of one build).
fn dump_results(dir: &Path, name: &str, mut found: FileChecks) {
    if let Some(lin) = &mut found.checks.linearizability {
        lin.elapsed_ms = 0.0;
    }
    std::fs::create_dir_all(dir).expect("create the dump directory");
    let file = dir.join(format!("{}.txt", name.replace([' ', ','], "_")));
    std::fs::write(&file, format!("{found:#?}\n")).expect("write the dump");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(at) = args.iter().position(|a| a == "--write") {
        let path = Path::new(&args[at + 1]);
        let events = args[at + 2].parse().expect("EVENTS is a number");
        let processes = args
            .get(at + 3)
            .map_or(8, |l| l.parse().expect("PROCESSES is a number"));
        let locks = args
            .get(at + 4)
            .map_or(1, |l| l.parse().expect("LOCKS is a number"));
        let n = write(
            path,
            Shape {
                processes,
                locks,
                events,
            },
        );
        println!("wrote {n} events to {}", path.display());
        return;
    }
    // `--dump DIR`: also writes each case's results, timings zeroed, to DIR/<case>.txt, to
    // compare two builds' results byte for byte.
    let dump = args
        .iter()
        .position(|a| a == "--dump")
        .map(|at| Path::new(&args[at + 1]));
    let filter = args
        .iter()
        .enumerate()
        .find(|&(i, a)| !a.starts_with('-') && (i == 0 || args[i - 1] != "--dump"))
        .map(|(_, a)| a);
    // `--fenced`: the property without a lock model, so no linearizability check (the lock
    // checks alone).
    let property = if args.iter().any(|a| a == "--fenced") {
        Property::Fenced
    } else {
        Property::Exclusive
    };
    // (name, events, processes, locks)
    let cases = [
        ("1M events, 8 processes, 1 lock", 1_000_000, 8, 1),
        ("1M events, 64 processes, 16 locks", 1_000_000, 64, 16),
        ("10M events, 8 processes, 1 lock", 10_000_000, 8, 1),
        ("10M events, 64 processes, 16 locks", 10_000_000, 64, 16),
        ("100M events, 8 processes, 1 lock", 100_000_000, 8, 1),
        ("100M events, 64 processes, 16 locks", 100_000_000, 64, 16),
    ];
    let dir = tempfile::tempdir().expect("temporary directory");
    for (name, events, processes, locks) in cases {
        let chosen = match filter {
            Some(f) => name.contains(f.as_str()),
            None => events < 100_000_000,
        };
        if !chosen {
            continue;
        }
        reset_peak_rss();
        let path = dir.path().join("bench-history.jsonl");
        let n = write(
            &path,
            Shape {
                processes,
                locks,
                events,
            },
        );
        let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
        // Reading and parsing alone, for scale.
        let (start, cpu) = (Instant::now(), cpu_secs());
        let mut reader = HistoryReader::open(&path).expect("open the generated history");
        while reader
            .next_event()
            .expect("read the generated history")
            .is_some()
        {}
        let (read, read_cpu) = (start.elapsed(), cpu_secs() - cpu);
        let (start, cpu) = (Instant::now(), cpu_secs());
        let params = LockCheckParams {
            property,
            deadlock_ms: 3000,
        };
        let found = check_run_file(&path, &params).expect("read the generated history");
        let (took, took_cpu) = (start.elapsed(), cpu_secs() - cpu);
        if let Some(out) = dump {
            dump_results(out, name, found.clone());
        }
        let checks = &found.checks;
        assert_eq!(checks.verdict(), Verdict::Valid, "{name}: {}", checks.lock);
        assert_eq!(found.events, n);
        assert_eq!(checks.lock.stats.max_concurrent_holders, 1);
        println!(
            "{name}: {n} events ({:.0} MB) checked in {:.2} s wall, {:.2} s CPU (reading alone {:.2} s wall, {:.2} s CPU), peak RSS {:.0} MiB",
            bytes as f64 / 1e6,
            took.as_secs_f64(),
            took_cpu,
            read.as_secs_f64(),
            read_cpu,
            peak_rss_mib()
        );
        std::fs::remove_file(&path).ok();
    }
}
