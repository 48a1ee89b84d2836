//! Times the linearizability checker on every history in `../shared/data/porcupine`: per file
//! (median of 5) and totals, single-threaded, with parallel parts, and with files spread over
//! threads; then peak RSS. Run with `cargo bench -p lockpick-checker --bench lin_porcupine`.
//! An optional argument filters files by substring.

use lockpick_checker::import::read_file;
use lockpick_checker::lin::{check_history, Budget, History};
use lockpick_checker::models::ModelName;
use lockpick_checker::verdict::Verdict;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const RUNS: usize = 5;

struct Case {
    name: String,
    model: ModelName,
    want: Verdict,
    history: History,
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time_check(c: &Case, budget: &Budget) -> Duration {
    let runs = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            let r = check_history(&c.history, c.model, budget).expect("check");
            let t = start.elapsed();
            assert_eq!(r.verdict, c.want, "{}: wrong verdict", c.name);
            t
        })
        .collect();
    median(runs)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/porcupine");
    let Ok(tsv) = std::fs::read_to_string(dir.join("expected.tsv")) else {
        eprintln!(
            "!!! SKIPPED: {} not found; nothing to benchmark !!!",
            dir.display()
        );
        return;
    };
    let mut cases = Vec::new();
    for line in tsv.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        if filter.as_deref().is_some_and(|f| !cols[0].contains(f)) {
            continue;
        }
        let history = read_file(&dir.join(cols[0]), None).expect("import");
        cases.push(Case {
            name: cols[0].to_string(),
            model: cols[1].parse().expect("model"),
            want: if cols[2] == "linearizable" {
                Verdict::Valid
            } else {
                Verdict::Invalid
            },
            history,
        });
    }
    let one = Budget::unlimited();
    let two = Budget::unlimited().with_threads(2);
    println!(
        "{:<22} {:>8} {:>6} {:>12} {:>14}",
        "file", "verdict", "ops", "1 thread ms", "2 threads ms"
    );
    let mut totals: Vec<(String, Duration, Duration)> = Vec::new();
    for c in &cases {
        let t1 = time_check(c, &one);
        let t2 = time_check(c, &two);
        println!(
            "{:<22} {:>8} {:>6} {:>12.3} {:>14.3}",
            c.name,
            c.want.name(),
            c.history.ops.len(),
            ms(t1),
            ms(t2)
        );
        let set = c.name.split('/').next().unwrap_or("").to_string();
        match totals.iter_mut().find(|(s, _, _)| *s == set) {
            Some((_, a, b)) => {
                *a += t1;
                *b += t2;
            }
            None => totals.push((set, t1, t2)),
        }
    }
    println!();
    for (set, a, b) in &totals {
        let n = cases
            .iter()
            .filter(|c| c.name.starts_with(set.as_str()))
            .count();
        println!(
            "total {set:<6} ({n} files): {:.3} ms single-threaded, {:.3} ms with parallel parts (sum of per-file medians)",
            ms(*a),
            ms(*b)
        );
    }
    // Whole sets with files spread over 2 threads, median of 5 wall times.
    for (set, _, _) in &totals {
        let set_cases: Vec<&Case> = cases
            .iter()
            .filter(|c| c.name.starts_with(set.as_str()))
            .collect();
        let runs = (0..RUNS)
            .map(|_| {
                let next = std::sync::atomic::AtomicUsize::new(0);
                let start = Instant::now();
                std::thread::scope(|s| {
                    for _ in 0..2 {
                        s.spawn(|| loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(c) = set_cases.get(i) else { break };
                            let r = check_history(&c.history, c.model, &one).expect("check");
                            assert_eq!(r.verdict, c.want, "{}", c.name);
                        });
                    }
                });
                start.elapsed()
            })
            .collect();
        println!(
            "total {set:<6} files spread over 2 threads: {:.3} ms wall (median of {RUNS})",
            ms(median(runs))
        );
    }
    match peak_rss_kib() {
        Some(k) => println!("peak RSS (VmHWM): {:.1} MiB", k as f64 / 1024.0),
        None => println!("peak RSS: unavailable"),
    }
}
