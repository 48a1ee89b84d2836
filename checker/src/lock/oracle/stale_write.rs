//! Test oracle (the in-memory checker the streaming one replaced): Stale fencing-token writes: writes the resource accepted although it had already accepted a
//! newer token, found both from the resource's own `max_token` and from real-time order; and
//! writes the fence rejected, which are observations that the fence worked.

use super::super::report::{Capped, Finding, FindingKind, TimeWindow};
use super::holding::Holdings;
use super::ops::{Op, Ops};
use crate::faults::{active_during, secs, FaultWindow};
use crate::history::{EventKind, F};
use std::collections::HashMap;

/// Accepted stale writes (violations) and rejected ones (observations).
pub(crate) struct StaleWrites {
    pub accepted: Capped,
    pub rejected: Capped,
}

/// The error a fenced resource gives when it rejects a write.
pub(crate) const STALE_TOKEN: &str = "stale-token";

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

fn describe_accepted(
    ops: &Ops<'_>,
    holdings: &Holdings<'_>,
    faults: &[FaultWindow],
    w: usize,
    token: u64,
    proof: Proof,
) -> Finding {
    let op = &ops.ops[w];
    let done = op.completion.expect("accepted writes completed");
    let earlier = match proof {
        Proof::RealTime { earlier } => Some(earlier),
        Proof::MaxToken { earlier, .. } => earlier,
    };
    let mut indices = vec![op.invoke.index, done.index];
    let mut processes = vec![op.process];
    let mut tokens = vec![token];
    let mut start = op.invoke.time_ns;
    let after = match (&proof, earlier.map(|e| &ops.ops[e])) {
        (_, Some(e)) => {
            let e_done = e.completion.expect("earlier write completed");
            indices.extend([e.invoke.index, e_done.index]);
            processes.push(e.process);
            tokens.push(e.token().unwrap_or(0));
            start = start.min(e_done.time_ns);
            let how = match proof {
                Proof::RealTime { .. } => "after",
                Proof::MaxToken { .. } => "while",
            };
            format!(
                "{how} process {} had written with token {} at {}",
                e.process,
                e.token().unwrap_or(0),
                secs(e_done.time_ns)
            )
        }
        (Proof::MaxToken { max, .. }, None) => {
            tokens.push(*max);
            format!("although the resource had already accepted token {max}")
        }
        (Proof::RealTime { .. }, None) => unreachable!("real-time proof names its write"),
    };
    // Faults from the moment the writer took the lock explain why it wrote late.
    let since = holdings
        .of_write
        .get(&w)
        .map_or(op.invoke.time_ns, |&h| holdings.list[h].start_ns);
    let active = active_during(faults, since, done.time_ns);
    let paused: u64 = active
        .iter()
        .filter(|f| f.f == F::Pause && f.client == Some(op.process))
        .map(|f| f.end_ns - f.start_ns)
        .sum();
    let pause_phrase = if paused > 0 {
        format!("; process {} had been paused {}", op.process, secs(paused))
    } else {
        String::new()
    };
    let summary = format!(
        "process {} wrote with token {} at {} {}{}",
        op.process,
        token,
        secs(op.invoke.time_ns),
        after,
        pause_phrase
    );
    let mut f = Finding::new(FindingKind::StaleWrite, summary).with_indices(indices);
    f.lock = (!op.lock.is_empty()).then(|| op.lock.to_string());
    f.processes = processes;
    f.tokens = tokens;
    f.window = Some(TimeWindow {
        start_ns: start,
        end_ns: done.time_ns,
    });
    f.faults = active.into_iter().cloned().collect();
    f
}

fn describe_rejected(op: &Op<'_>, token: u64, faults: &[FaultWindow]) -> Finding {
    let done = op.completion.expect("rejected writes completed");
    let max = done.value.max_token;
    let max_phrase = max.map_or_else(String::new, |m| format!(" (it had accepted token {m})"));
    let summary = format!(
        "the fence rejected process {}'s write with token {} at {}{}",
        op.process,
        token,
        secs(op.invoke.time_ns),
        max_phrase
    );
    let mut f = Finding::new(FindingKind::RejectedStaleWrite, summary)
        .with_indices(vec![op.invoke.index, done.index]);
    f.lock = (!op.lock.is_empty()).then(|| op.lock.to_string());
    f.processes = vec![op.process];
    f.tokens = std::iter::once(token).chain(max).collect();
    f.window = Some(TimeWindow {
        start_ns: op.invoke.time_ns,
        end_ns: done.time_ns,
    });
    f.faults = active_during(faults, op.invoke.time_ns, done.time_ns)
        .into_iter()
        .cloned()
        .collect();
    f
}
