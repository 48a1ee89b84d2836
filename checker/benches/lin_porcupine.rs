//! Times the linearizability checker on every history in `../shared/data/porcupine`, and
//! Porcupine on the same files in the same run, side by side: per file (median of 5) and per
//! set (sums of the per-file medians), with the ratio Porcupine / lockpick (how many times
//! faster lockpick is). Then whole sets with files spread over threads, long synthetic
//! histories, and peak RSS. Run with `cargo bench -p lockpick-checker --bench lin_porcupine`.
//! An optional argument filters files by substring (`synthetic` runs only the generated long
//! histories).
//!
//! What is timed on each side, the same work: deciding the verdict of a history already read
//! into memory, splitting into parts (per key) included. lockpick's `decide` is the report's
//! `elapsed` (the narrowing down of a violation for a reader, `+explain`, comes after and is
//! shown apart); Porcupine's is `porcupine.CheckEvents`, its call that decides alone, with its
//! own test suite's etcd and kv models (`tools/porcupine-bench`). Porcupine checks the parts of
//! a history in parallel goroutines on GOMAXPROCS threads (printed; Go's default is every
//! core); lockpick is shown on one thread and with 2 threads for parts (histories of fewer
//! than 1000 operations stay on one). Every verdict, on both sides, is asserted against
//! expected.tsv.

#[path = "support/porcupine.rs"]
mod porcupine;

use lockpick_checker::import::read_file;
use lockpick_checker::lin_search::{Budget, Datum, History, Op, OpF};
use lockpick_checker::linearizability::check_history;
use lockpick_checker::models::{find_model, mutex, register, Model};
use lockpick_checker::verdict::Verdict;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const RUNS: usize = 5;

struct Case {
    name: String,
    model: &'static dyn Model,
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

/// `porcupine / lockpick` as `12.3x`.
fn ratio(porcupine: Option<Duration>, lockpick: Duration) -> String {
    match porcupine {
        Some(p) if !lockpick.is_zero() => {
            format!("{:.1}x", p.as_secs_f64() / lockpick.as_secs_f64())
        }
        _ => "-".to_string(),
    }
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Per-set sums of per-file medians: lockpick decide 1 and 2 threads, with explanation 1 and
/// 2 threads, Porcupine (`None` once a file lacks its time).
struct Totals {
    set: String,
    files: usize,
    lockpick: [Duration; 4],
    porcupine: Option<Duration>,
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
            model: find_model(cols[1]).expect("model"),
            want: if cols[2] == "linearizable" {
                Verdict::Valid
            } else {
                Verdict::Invalid
            },
            history,
        });
    }
    let porcupine = if cases.is_empty() {
        None
    } else {
        match porcupine::run(&dir, RUNS, filter.as_deref()) {
            Ok(p) => {
                println!("Porcupine: {}", p.about);
                Some(p)
            }
            Err(why) => {
                eprintln!(
                    "!!! NO PORCUPINE COMPARISON: {why}\n!!! lockpick's figures alone follow !!!"
                );
                None
            }
        }
    };
    println!(
        "lockpick: median of {RUNS}, 1 thread (1t) and 2 threads for parts (2t); ratio = Porcupine / lockpick decide"
    );
    let one = Budget::unlimited();
    let two = Budget::unlimited().with_threads(2);
    println!(
        "{:<22} {:>8} {:>6} {:>10} {:>10} {:>11} {:>11} {:>10} {:>8} {:>8}",
        "file",
        "verdict",
        "ops",
        "decide 1t",
        "decide 2t",
        "+explain 1t",
        "+explain 2t",
        "porcupine",
        "ratio 1t",
        "ratio 2t"
    );
    let mut totals: Vec<Totals> = Vec::new();
    for c in &cases {
        let (w1, d1) = time_check(c, &one);
        let (w2, d2) = time_check(c, &two);
        let p = porcupine.as_ref().map(|p| {
            let &(ok, t) = p.files.get(&c.name).expect("Porcupine timed every file");
            assert_eq!(
                ok,
                c.want == Verdict::Valid,
                "{}: Porcupine's verdict",
                c.name
            );
            t
        });
        println!(
            "{:<22} {:>8} {:>6} {:>10.3} {:>10.3} {:>11.3} {:>11.3} {:>10} {:>8} {:>8}",
            c.name,
            c.want.name(),
            c.history.ops.len(),
            ms(d1),
            ms(d2),
            ms(w1),
            ms(w2),
            p.map_or("-".to_string(), |p| format!("{:.3}", ms(p))),
            ratio(p, d1),
            ratio(p, d2),
        );
        let set = c.name.split('/').next().unwrap_or("").to_string();
        let add = [d1, d2, w1, w2];
        let t = match totals.iter_mut().position(|t| t.set == set) {
            Some(i) => &mut totals[i],
            None => {
                totals.push(Totals {
                    set,
                    files: 0,
                    lockpick: [Duration::ZERO; 4],
                    porcupine: porcupine.as_ref().map(|_| Duration::ZERO),
                });
                totals.last_mut().expect("pushed")
            }
        };
        t.files += 1;
        t.lockpick.iter_mut().zip(add).for_each(|(t, a)| *t += a);
        t.porcupine = t.porcupine.zip(p).map(|(t, p)| t + p);
    }
    println!();
    for t in &totals {
        let [d1, d2, w1, w2] = t.lockpick;
        println!(
            "total {:<6} ({} files, sums of per-file medians): lockpick decide {:.3} ms 1t, {:.3} ms 2t; \
             with explanation {:.3} ms 1t, {:.3} ms 2t",
            t.set,
            t.files,
            ms(d1),
            ms(d2),
            ms(w1),
            ms(w2)
        );
        match t.porcupine {
            Some(p) => println!(
                "total {:<6} Porcupine {:.3} ms: lockpick is {} Porcupine single-threaded, {} with 2 threads for parts",
                t.set,
                ms(p),
                ratio(Some(p), d1),
                ratio(Some(p), d2)
            ),
            None => println!("total {:<6} Porcupine: not measured", t.set),
        }
    }
    // Whole sets with files spread over 2 threads, median of 5 wall times.
    for t in &totals {
        let set_cases: Vec<&Case> = cases
            .iter()
            .filter(|c| c.name.starts_with(t.set.as_str()))
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
            "total {:<6} files spread over 2 threads: {:.3} ms wall (median of {RUNS})",
            t.set,
            ms(median(runs))
        );
    }
    if filter.as_deref().is_none_or(|f| "synthetic".contains(f)) {
        synthetic();
    }
    match peak_rss_kib() {
        Some(k) => println!("peak RSS (VmHWM): {:.1} MiB", k as f64 / 1024.0),
        None => println!("peak RSS: unavailable"),
    }
}

/// splitmix64, for the synthetic histories.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }
}

fn op(process: u64, f: OpF, arg: Datum, out: Option<Datum>, call: u64, ret: u64) -> Op {
    Op {
        process,
        f,
        key: None,
        arg,
        out: out.clone(),
        call,
        ret: out.is_some().then_some(ret),
        call_ns: call,
        ret_ns: out.is_some().then_some(ret),
    }
}

/// A long cas-register history from a sequential run: operation `i` takes effect at `10 i`,
/// is pending up to 30 either side, and one in ten times times out (its effect applied or not).
fn long_register(n: usize) -> History {
    let mut rng = Rng(1);
    let mut state: Option<i64> = None;
    let mut ops = Vec::with_capacity(n);
    for i in 0..n {
        let t = 1000 + 10 * i as u64;
        let (call, ret) = (t - rng.below(31), t + rng.below(31));
        let unknown = rng.below(10) == 0;
        let applies = !unknown || rng.below(2) == 0;
        let out = |d: Datum| (!unknown).then_some(d);
        match rng.below(3) {
            0 => ops.push(op(
                i as u64,
                OpF::Read,
                Datum::Nil,
                Some(state.map_or(Datum::Nil, Datum::Int)),
                call,
                ret,
            )),
            1 => {
                let v = rng.below(5) as i64;
                if applies {
                    state = Some(v);
                }
                ops.push(op(
                    i as u64,
                    OpF::Write,
                    Datum::Int(v),
                    out(Datum::Nil),
                    call,
                    ret,
                ));
            }
            _ => {
                let from = state.unwrap_or(0);
                let to = rng.below(5) as i64;
                if state.is_some() && applies {
                    state = Some(to);
                }
                if state.is_some() || !applies {
                    ops.push(op(
                        i as u64,
                        OpF::Cas,
                        Datum::Pair(from, to),
                        out(Datum::Nil),
                        call,
                        ret,
                    ));
                }
            }
        }
    }
    ops.sort_by_key(|o| o.call);
    History { ops }
}

/// A long mutex history: holders take turns; the next holder's acquire is invoked while the
/// previous one still holds the lock and returns after its release.
fn long_mutex(holders: usize) -> History {
    let mut rng = Rng(2);
    let mut ops = Vec::new();
    let mut t = 100u64;
    let mut next_call = 0u64;
    for h in 0..holders {
        let p = (h % 8) as u64;
        let acquired = t + rng.below(5);
        ops.push(op(
            p,
            OpF::Acquire,
            Datum::Nil,
            Some(Datum::Nil),
            next_call,
            acquired,
        ));
        let release_call = acquired + 5 + rng.below(20);
        let release_ret = release_call + 1 + rng.below(5);
        ops.push(op(
            p,
            OpF::Release,
            Datum::Nil,
            Some(Datum::Nil),
            release_call,
            release_ret,
        ));
        next_call = acquired + 1 + rng.below(4);
        t = release_ret + 1;
    }
    ops.sort_by_key(|o| o.call);
    History { ops }
}

/// Histories much longer than the published ones: the search must stay near-linear.
fn synthetic() {
    println!();
    let one = Budget::unlimited();
    for (name, model, history) in [
        (
            "register 20000 ops",
            &register::CAS_REGISTER as &dyn Model,
            long_register(20_000),
        ),
        ("mutex 20000 ops", &mutex::MUTEX, long_mutex(10_000)),
    ] {
        let runs = (0..RUNS)
            .map(|_| {
                let start = Instant::now();
                let r = check_history(&history, model, &one).expect("check");
                assert_eq!(r.verdict, Verdict::Valid, "{name}\n{r}");
                start.elapsed()
            })
            .collect();
        println!(
            "synthetic {name}: {:.3} ms single-threaded (median of {RUNS})",
            ms(median(runs))
        );
    }
}
