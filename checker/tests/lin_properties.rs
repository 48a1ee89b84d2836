//! Property tests: histories produced by a sequential execution, with random real-time
//! overlaps and some operations of unknown outcome, are always linearizable; the same history
//! with one read result changed to a value nobody wrote never is.

use lockpick_checker::lin_search::{Budget, Datum, History, Op, OpF};
use lockpick_checker::linearizability::check_history;
use lockpick_checker::models::{kv, register, Model};
use lockpick_checker::verdict::Verdict;

/// splitmix64: small, deterministic, good enough to spread cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// An operation with its linearization point and what it did there.
struct Planned {
    f: OpF,
    key: Option<String>,
    arg: Datum,
    out: Datum,
    unknown: bool,
}

/// Lays planned operations out in time: operation `i` takes effect at `10 i` and is pending
/// for a random interval around it, up to `spread` slots either side, so up to about
/// `2 spread` operations overlap. Operations of unknown outcome never return.
fn lay_out(rng: &mut Rng, planned: Vec<Planned>, spread: u64) -> History {
    let ops = planned
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let t = 1000 + 10 * i as u64;
            let call = t - rng.below(10 * spread + 1);
            let ret = t + rng.below(10 * spread + 1);
            Op {
                process: i as u64,
                f: p.f,
                key: p.key.map(String::into_boxed_str),
                arg: p.arg,
                out: (!p.unknown).then_some(p.out),
                call,
                ret: (!p.unknown).then_some(ret),
                call_ns: call,
                ret_ns: (!p.unknown).then_some(ret),
            }
        })
        .collect();
    History { ops }
}

fn register_history(rng: &mut Rng, n: usize) -> History {
    // Few values and many unknown outcomes make interchangeable operations common.
    let unknown_pct = rng.below(40);
    register_history_with(rng, n, unknown_pct)
}

/// Long histories with many unknown outcomes take exponential time to refute (every
/// operation of unknown outcome may or may not have happened), so they get few.
fn long_register_history(rng: &mut Rng, n: usize) -> History {
    let unknown_pct = rng.below(3);
    register_history_with(rng, n, unknown_pct)
}

fn register_history_with(rng: &mut Rng, n: usize, unknown_pct: u64) -> History {
    let mut state: Option<i64> = None;
    let mut planned = Vec::new();
    let values = 2 + rng.below(4);
    while planned.len() < n {
        let unknown = rng.chance(unknown_pct);
        // An operation of unknown outcome may or may not have taken effect.
        let applies = !unknown || rng.chance(50);
        match rng.below(3) {
            0 => planned.push(Planned {
                f: OpF::Read,
                key: None,
                arg: Datum::Nil,
                out: state.map_or(Datum::Nil, Datum::Int),
                unknown: false,
            }),
            1 => {
                let v = rng.below(values) as i64;
                if applies {
                    state = Some(v);
                }
                planned.push(Planned {
                    f: OpF::Write,
                    key: None,
                    arg: Datum::Int(v),
                    out: Datum::Nil,
                    unknown,
                });
            }
            _ => {
                // Only swaps that happen (or might) are recorded: a failed cas did not take
                // effect and Jepsen histories leave it out.
                let Some(from) = state else { continue };
                let to = rng.below(values) as i64;
                if applies {
                    state = Some(to);
                }
                planned.push(Planned {
                    f: OpF::Cas,
                    key: None,
                    arg: Datum::Pair(from, to),
                    out: Datum::Nil,
                    unknown,
                });
            }
        }
    }
    let spread = 1 + rng.below(4);
    lay_out(rng, planned, spread)
}

fn kv_history(rng: &mut Rng, n: usize) -> History {
    let mut state = vec![String::new(); 3];
    let mut planned = Vec::new();
    let unknown_pct = rng.below(40);
    for i in 0..n {
        let k = rng.below(3) as usize;
        let key = Some(k.to_string());
        let unknown = rng.chance(unknown_pct);
        let applies = !unknown || rng.chance(50);
        // Repeated pieces make equal strings reachable in different ways.
        let piece = format!("x{}y", i % 4);
        let p = match rng.below(4) {
            0 | 1 => Planned {
                f: OpF::Get,
                key,
                arg: Datum::Nil,
                out: Datum::Str(state[k].as_str().into()),
                unknown: false,
            },
            2 => {
                if applies {
                    state[k].push_str(&piece);
                }
                Planned {
                    f: OpF::Append,
                    key,
                    arg: Datum::Str(piece.into()),
                    out: Datum::Nil,
                    unknown,
                }
            }
            _ => {
                if applies {
                    state[k] = piece.clone();
                }
                Planned {
                    f: OpF::Put,
                    key,
                    arg: Datum::Str(piece.into()),
                    out: Datum::Nil,
                    unknown,
                }
            }
        };
        planned.push(p);
    }
    let spread = 1 + rng.below(4);
    lay_out(rng, planned, spread)
}

/// Changes the result of one completed read to `impossible`; returns its index, if the
/// history has a completed read.
fn mutate_read(rng: &mut Rng, h: &mut History, impossible: Datum) -> Option<usize> {
    let reads: Vec<usize> = (0..h.ops.len())
        .filter(|&i| matches!(h.ops[i].f, OpF::Read | OpF::Get) && h.ops[i].out.is_some())
        .collect();
    let &i = reads.get(rng.below(reads.len().max(1) as u64) as usize)?;
    h.ops[i].out = Some(impossible);
    Some(i)
}

fn budget() -> Budget {
    Budget {
        time: Some(std::time::Duration::from_secs(60)),
        memory_bytes: None,
        threads: 1,
    }
}

/// `cases` histories of `min..min + spread` operations each.
fn run_sized(
    model: &'static dyn Model,
    gen: fn(&mut Rng, usize) -> History,
    impossible: Datum,
    cases: usize,
    (min, spread): (u64, u64),
) {
    let mut rng = Rng(0x5eed_0000 + model.name().len() as u64 + min);
    let mut mutated = 0;
    for case in 0..cases {
        let n = (min + rng.below(spread)) as usize;
        let mut h = gen(&mut rng, n);
        let r = check_history(&h, model, &budget()).expect("model accepts generated ops");
        assert_eq!(r.verdict, Verdict::Valid, "case {case}: {h:#?}\n{r}");
        let r2 = check_history(&h, model, &budget().with_threads(2)).expect("check");
        assert_eq!(r2.verdict, Verdict::Valid, "case {case} with 2 threads");

        if let Some(i) = mutate_read(&mut rng, &mut h, impossible.clone()) {
            mutated += 1;
            let r = check_history(&h, model, &budget()).expect("check");
            assert_eq!(
                r.verdict,
                Verdict::Invalid,
                "case {case}, read {i} mutated: {h:#?}"
            );
            let v = r.violation.expect("invalid report has a violation");
            assert!(
                !v.prefix.contains(&h.ops[i]),
                "case {case}: the impossible read is in the linearizable prefix"
            );
        }
    }
    assert!(
        mutated > cases * 2 / 3,
        "only {mutated} cases had a read to mutate"
    );
}

fn run(model: &'static dyn Model, gen: fn(&mut Rng, usize) -> History, impossible: Datum) {
    run_sized(model, gen, impossible, 300, (10, 50));
}

#[test]
fn sequential_register_histories_are_linearizable_and_an_impossible_read_is_not() {
    run(
        &register::CAS_REGISTER,
        register_history,
        Datum::Int(1_000_000),
    );
}

#[test]
fn sequential_kv_histories_are_linearizable_and_an_impossible_get_is_not() {
    run(&kv::KV, kv_history, Datum::Str("never written".into()));
}

#[test]
fn long_register_histories_keep_their_verdicts() {
    // Past 512 operations the memo keys are cut to the frontier of the linearized set.
    run_sized(
        &register::CAS_REGISTER,
        long_register_history,
        Datum::Int(1_000_000),
        12,
        (600, 1500),
    );
}
