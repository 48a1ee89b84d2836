//! Test oracle (the in-memory checker the streaming one replaced): Stale fencing-token writes: writes the resource accepted although it had already accepted a
//! newer token, found both from the resource's own `max_token` and from real-time order; and
//! writes the fence rejected, which are observations that the fence worked.

use super::super::report::{Capped, Finding};
use super::holding::Holdings;
use super::ops::{Op, Ops};
use crate::faults::FaultWindow;
use crate::history::{EventKind, F};
use crate::lock::stream;
use std::collections::HashMap;

/// Accepted stale writes (violations) and rejected ones (observations).
pub(crate) struct StaleWrites {
    pub accepted: Capped,
    pub rejected: Capped,
}

use super::super::report::STALE_TOKEN;

/// How a stale write was proven.
enum Proof {
    /// The resource reported a higher `max_token` than the write's token.
    MaxToken { max: u64, earlier: Option<usize> },
    /// A write with a higher token completed before this one was invoked.
    RealTime { earlier: usize },
}

pub(crate) fn stale_writes(
    ops: &Ops<'_>,
    holdings: &Holdings<'_>,
    faults: &[FaultWindow],
) -> StaleWrites {
    let writes: Vec<usize> = (0..ops.ops.len())
        .filter(|&i| ops.ops[i].f == F::Write)
        .collect();

    // Accepted writes per (resource, token), in completion order, to name the write that set
    // the `max_token` a later write was measured against.
    let mut accepted_by_token: HashMap<(&str, u64), Vec<usize>> = HashMap::new();
    // Walk invokes and completions in history order; per resource keep the highest token
    // whose write had completed, and remember it at each write's invoke.
    let mut steps: Vec<(u64, usize, bool)> = Vec::with_capacity(writes.len() * 2);
    for &w in &writes {
        let op = &ops.ops[w];
        steps.push((op.invoke.index, w, false));
        if let Some(c) = op.completion.filter(|c| c.kind == EventKind::Ok) {
            steps.push((c.index, w, true));
        }
    }
    steps.sort_unstable();
    let mut highest: HashMap<&str, (u64, usize)> = HashMap::new();
    let mut seen_at_invoke: HashMap<usize, (u64, usize)> = HashMap::new();
    for (_, w, completed) in steps {
        let op = &ops.ops[w];
        if completed {
            if let Some(t) = op.token() {
                accepted_by_token.entry((op.lock, t)).or_default().push(w);
                let best = highest.entry(op.lock).or_insert((t, w));
                if t > best.0 {
                    *best = (t, w);
                }
            }
        } else if let Some(&h) = highest.get(op.lock) {
            seen_at_invoke.insert(w, h);
        }
    }

    let mut accepted = Capped::default();
    let mut rejected = Capped::default();
    for &w in &writes {
        let op = &ops.ops[w];
        let Some(c) = op.completion else { continue };
        let Some(token) = op.token() else { continue };
        match c.kind {
            EventKind::Ok => {
                let real_time = seen_at_invoke
                    .get(&w)
                    .filter(|(t, _)| *t > token)
                    .map(|&(_, earlier)| Proof::RealTime { earlier });
                let by_max = c.value.max_token.filter(|&m| m > token).map(|max| {
                    let earlier = accepted_by_token.get(&(op.lock, max)).and_then(|v| {
                        v.iter()
                            .rev()
                            .copied()
                            .find(|&e| ops.ops[e].completion.is_some_and(|x| x.index < c.index))
                    });
                    Proof::MaxToken { max, earlier }
                });
                if let Some(proof) = real_time.or(by_max) {
                    accepted
                        .push_with(|| describe_accepted(ops, holdings, faults, w, token, proof));
                }
            }
            EventKind::Fail if op.error() == Some(STALE_TOKEN) => {
                rejected.push_with(|| describe_rejected(op, token, faults));
            }
            _ => {}
        }
    }
    StaleWrites { accepted, rejected }
}

/// A completed write as the streaming checker's evidence.
fn write_of(op: &Op<'_>) -> stream::stale::Write {
    let done = op.completion.expect("a described write completed");
    stream::stale::Write {
        process: op.process,
        token: op.token().unwrap_or(0),
        invoke_ns: op.invoke.time_ns,
        invoke_index: op.invoke.index,
        done_ns: done.time_ns,
        done_index: done.index,
    }
}

fn describe_accepted(
    ops: &Ops<'_>,
    holdings: &Holdings<'_>,
    faults: &[FaultWindow],
    w: usize,
    _token: u64,
    proof: Proof,
) -> Finding {
    let op = &ops.ops[w];
    let since = holdings
        .of_write
        .get(&w)
        .map_or(op.invoke.time_ns, |&h| holdings.list[h].start_ns);
    let proof = match proof {
        Proof::RealTime { earlier } => stream::stale::Proof::RealTime {
            earlier: write_of(&ops.ops[earlier]),
        },
        Proof::MaxToken { max, earlier } => stream::stale::Proof::MaxToken {
            max,
            earlier: earlier.map(|e| write_of(&ops.ops[e])),
        },
    };
    stream::describe::stale(op.lock, &write_of(op), since, proof, faults)
}

fn describe_rejected(op: &Op<'_>, _token: u64, faults: &[FaultWindow]) -> Finding {
    let max = op.completion.and_then(|c| c.value.max_token);
    stream::describe::rejected(op.lock, &write_of(op), max, faults)
}
