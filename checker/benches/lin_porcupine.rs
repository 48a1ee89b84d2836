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

/// Median wall time of the whole check (deciding, and narrowing a violation down), and median
/// time to decide alone.
fn time_check(c: &Case, budget: &Budget) -> (Duration, Duration) {
    let (mut wall, mut decide) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let start = Instant::now();
        let r = check_history(&c.history, c.model, budget).expect("check");
        wall.push(start.elapsed());
        decide.push(r.elapsed);
        assert_eq!(r.verdict, c.want, "{}: wrong verdict", c.name);
    }
    (median(wall), median(decide))
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
        "{:<22} {:>8} {:>6} {:>14} {:>14} {:>14}",
        "file", "verdict", "ops", "decide 1t ms", "+explain 1t ms", "+explain 2t ms"
    );
    let mut totals: Vec<(String, [Duration; 3])> = Vec::new();
    for c in &cases {
        let (w1, d1) = time_check(c, &one);
        let (w2, _) = time_check(c, &two);
        println!(
            "{:<22} {:>8} {:>6} {:>14.3} {:>14.3} {:>14.3}",
            c.name,
            c.want.name(),
            c.history.ops.len(),
            ms(d1),
            ms(w1),
            ms(w2)
        );
        let set = c.name.split('/').next().unwrap_or("").to_string();
        let add = [d1, w1, w2];
        match totals.iter_mut().find(|(s, _)| *s == set) {
            Some((_, t)) => t.iter_mut().zip(add).for_each(|(t, a)| *t += a),
            None => totals.push((set, add)),
        }
    }
    println!();
    for (set, [d1, w1, w2]) in &totals {
        let n = cases
            .iter()
            .filter(|c| c.name.starts_with(set.as_str()))
            .count();
        println!(
            "total {set:<6} ({n} files, sums of per-file medians): decide {:.3} ms single-threaded; \
             with explanation {:.3} ms single-threaded, {:.3} ms with 2 threads for parts",
            ms(*d1),
            ms(*w1),
            ms(*w2)
        );
    }
    // Whole sets with files spread over 2 threads, median of 5 wall times.
    for (set, _) in &totals {
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
