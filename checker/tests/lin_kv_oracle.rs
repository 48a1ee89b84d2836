//! The kv check against an exhaustive oracle: on small random histories of one key, with
//! concurrent operations, unknown outcomes, puts among the appends, pieces that make equal
//! strings in several ways, and gets that read a string some order gives or a random one,
//! lockpick's verdict is the one found by trying every order. The search prunes (a string that
//! does not start what the next get read is a dead end); the oracle does not.

use lockpick_checker::lin_search::{Budget, Datum, History, Op, OpF};
use lockpick_checker::linearizability::check_history;
use lockpick_checker::models::kv;
use lockpick_checker::verdict::Verdict;

/// splitmix64.
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

const PIECES: [&str; 4] = ["a", "b", "ab", "ba"];

fn text(d: &Datum) -> &str {
    match d {
        Datum::Str(s) => s,
        _ => "",
    }
}

/// Whether some order of the operations, respecting real time, with every completed one and
/// any of the others, is a legal sequential kv execution from `state`.
fn oracle(ops: &[Op], done: &mut Vec<bool>, state: &str) -> bool {
    if ops
        .iter()
        .zip(done.iter())
        .all(|(o, &d)| d || o.ret.is_none())
    {
        return true;
    }
    for i in 0..ops.len() {
        if done[i] {
            continue;
        }
        // Every operation that returned before this one was invoked comes first.
        let blocked =
            (0..ops.len()).any(|j| !done[j] && ops[j].ret.is_some_and(|r| r < ops[i].call));
        if blocked {
            continue;
        }
        let next = match ops[i].f {
            OpF::Get if ops[i].out.as_ref().map(text) != Some(state) => continue,
            OpF::Get => state.to_string(),
            OpF::Put => text(&ops[i].arg).to_string(),
            _ => format!("{state}{}", text(&ops[i].arg)),
        };
        done[i] = true;
        let ok = oracle(ops, done, &next);
        done[i] = false;
        if ok {
            return true;
        }
    }
    false
}

/// A history of `n` operations on one key: a sequential run laid out with random overlaps,
/// some outcomes unknown, then maybe one get's result replaced by a random string.
fn history(rng: &mut Rng, n: usize) -> History {
    let mut state = String::new();
    let mut ops = Vec::new();
    for i in 0..n {
        let t = 10 * i as u64;
        let call = t.saturating_sub(rng.below(25));
        let ret = t + rng.below(25);
        let unknown = rng.below(6) == 0;
        let piece: Box<str> = PIECES[rng.below(4) as usize].into();
        let (f, arg, out) = match rng.below(5) {
            0 | 1 => (OpF::Get, Datum::Nil, Datum::Str(state.as_str().into())),
            2 | 3 => {
                if !unknown || rng.below(2) == 0 {
                    state.push_str(&piece);
                }
                (OpF::Append, Datum::Str(piece), Datum::Nil)
            }
            _ => {
                if !unknown || rng.below(2) == 0 {
                    state = piece.to_string();
                }
                (OpF::Put, Datum::Str(piece), Datum::Nil)
            }
        };
        let unknown = unknown && f != OpF::Get;
        ops.push(Op {
            process: i as u64,
            f,
            key: Some("k".into()),
            arg,
            out: (!unknown).then_some(out),
            call,
            ret: (!unknown).then_some(ret),
            call_ns: call,
            ret_ns: (!unknown).then_some(ret),
        });
    }
    let gets: Vec<usize> = (0..n).filter(|&i| ops[i].f == OpF::Get).collect();
    if !gets.is_empty() && rng.below(2) == 0 {
        let g = gets[rng.below(gets.len() as u64) as usize];
        let s: String = (0..rng.below(4))
            .map(|_| PIECES[rng.below(4) as usize])
            .collect();
        ops[g].out = Some(Datum::Str(s.into()));
    }
    ops.sort_by_key(|o| o.call);
    History { ops }
}

#[test]
fn kv_verdicts_match_trying_every_order() {
    let mut rng = Rng(0x6b76_0000);
    let (mut valid, mut invalid) = (0, 0);
    for case in 0..3000 {
        let n = 2 + rng.below(7) as usize;
        let h = history(&mut rng, n);
        let want = if oracle(&h.ops, &mut vec![false; h.ops.len()], "") {
            valid += 1;
            Verdict::Valid
        } else {
            invalid += 1;
            Verdict::Invalid
        };
        for threads in [1, 2] {
            let r = check_history(&h, &kv::KV, &Budget::unlimited().with_threads(threads))
                .expect("check");
            assert_eq!(
                r.verdict, want,
                "case {case}, {threads} threads: {h:#?}\n{r}"
            );
        }
    }
    assert!(
        valid > 1000 && invalid > 300,
        "{valid} valid, {invalid} invalid"
    );
}
