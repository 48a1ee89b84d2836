//! One sentence and the evidence for each finding, built at the end of the pass when the fault
//! windows are known (a double holder's in [`super::double_sentence`]).

use super::counter::Counter;
use super::deadlock::Segment;
use super::lockout::Stretch;
use super::stale::{Proof, Write};
use crate::faults::{active_during, secs, FaultWindow};
use crate::history::F;
use crate::lock::report::{Finding, FindingKind, TimeWindow};

pub(crate) fn token_phrase(token: Option<u64>) -> String {
    token.map_or_else(|| "no token".to_string(), |t| format!("token {t}"))
}

pub(crate) fn active_phrase(active: &[&FaultWindow]) -> String {
    if active.is_empty() {
        "no fault active".to_string()
    } else {
        let names: Vec<String> = active.iter().map(|w| w.describe()).collect();
        format!("faults active: {}", names.join("; "))
    }
}

/// An accepted stale write `w` on `lock`, invoked while holding since `since`.
pub(crate) fn stale(
    lock: &str,
    w: &Write,
    since: u64,
    proof: Proof,
    faults: &[FaultWindow],
) -> Finding {
    let earlier = match proof {
        Proof::RealTime { earlier } => Some(earlier),
        Proof::MaxToken { earlier, .. } => earlier,
    };
    let mut indices = vec![w.invoke_index, w.done_index];
    let mut processes = vec![w.process];
    let mut tokens = vec![w.token];
    let mut start = w.invoke_ns;
    let after = match (proof, earlier) {
        (_, Some(e)) => {
            indices.extend([e.invoke_index, e.done_index]);
            processes.push(e.process);
            tokens.push(e.token);
            start = start.min(e.done_ns);
            let how = match proof {
                Proof::RealTime { .. } => "after",
                Proof::MaxToken { .. } => "while",
            };
            format!(
                "{how} process {} had written with token {} at {}",
                e.process,
                e.token,
                secs(e.done_ns)
            )
        }
        (Proof::MaxToken { max, .. }, None) => {
            tokens.push(max);
            format!("although the resource had already accepted token {max}")
        }
        (Proof::RealTime { .. }, None) => unreachable!("real-time proof names its write"),
    };
    // The write whose token went backwards is the culprit: the faults named are those on
    // nodes and the writer's own from the moment it took the lock to the write's answer (a
    // pause before the write kept it writing late); another client's pause did nothing to it.
    let active: Vec<&FaultWindow> = active_during(faults, since, w.done_ns)
        .into_iter()
        .filter(|f| f.client.is_none_or(|c| c == w.process))
        .collect();
    let paused: u64 = active
        .iter()
        .filter(|f| f.f == F::Pause && f.client == Some(w.process))
        .map(|f| f.end_ns - f.start_ns)
        .sum();
    let pause_phrase = if paused > 0 {
        format!("; process {} had been paused {}", w.process, secs(paused))
    } else {
        String::new()
    };
    let summary = format!(
        "process {} wrote with token {} at {} {}{}",
        w.process,
        w.token,
        secs(w.invoke_ns),
        after,
        pause_phrase
    );
    let mut f = Finding::new(FindingKind::StaleWrite, summary).with_indices(indices);
    f.lock = (!lock.is_empty()).then(|| lock.to_string());
    f.processes = processes;
    f.tokens = tokens;
    f.window = Some(TimeWindow {
        start_ns: start,
        end_ns: w.done_ns,
    });
    f.faults = active.into_iter().cloned().collect();
    f
}

/// A write the fence rejected; `max` is the token it said it had accepted.
pub(crate) fn rejected(lock: &str, w: &Write, max: Option<u64>, faults: &[FaultWindow]) -> Finding {
    let max_phrase = max.map_or_else(String::new, |m| format!(" (it had accepted token {m})"));
    let summary = format!(
        "the fence rejected process {}'s write with token {} at {}{}",
        w.process,
        w.token,
        secs(w.invoke_ns),
        max_phrase
    );
    let mut f = Finding::new(FindingKind::RejectedStaleWrite, summary)
        .with_indices(vec![w.invoke_index, w.done_index]);
    f.lock = (!lock.is_empty()).then(|| lock.to_string());
    f.processes = vec![w.process];
    f.tokens = std::iter::once(w.token).chain(max).collect();
    f.window = Some(TimeWindow {
        start_ns: w.invoke_ns,
        end_ns: w.done_ns,
    });
    f.faults = active_during(faults, w.invoke_ns, w.done_ns)
        .into_iter()
        .cloned()
        .collect();
    f
}

/// How many duplicate-value groups a lost-update finding lists as evidence.
const MAX_PAIRS: usize = 20;

/// Lost updates and phantom increments of a counter with a final read; `unsure` writes may
/// or may not have happened.
pub(crate) fn counter(c: &Counter, unsure: i64) -> Vec<Finding> {
    let Some(read) = c.final_read else {
        return Vec::new();
    };
    let final_value = read.value;
    let acked_n = c.acked as i64;
    let mut findings = Vec::new();
    if final_value < acked_n {
        // In value order (the map's), each group's writes in the order they were invoked.
        let dups: Vec<(i64, Vec<Write>)> = (c.repeated.iter())
            .map(|(&k, v)| {
                let mut v = v.clone();
                v.sort_by_key(|w| w.invoke_index);
                (k, v)
            })
            .collect();
        let mut indices = vec![read.invoke_index, read.done_index];
        let mut processes = Vec::new();
        let mut start = read.done_ns;
        for (_, group) in dups.iter().take(MAX_PAIRS) {
            for o in group {
                indices.push(o.invoke_index);
                indices.push(o.done_index);
                processes.push(o.process);
                start = start.min(o.invoke_ns);
            }
        }
        processes.dedup();
        let example = dups.first().map_or_else(String::new, |(v, g)| {
            let names: Vec<String> = g.iter().map(|o| o.process.to_string()).collect();
            format!(
                "; e.g. processes {} all wrote {} (each read {})",
                names.join(", "),
                v,
                v - 1
            )
        });
        let lost = (acked_n - final_value) as u64;
        // Writes of values whose first write was let go (counter.rs, WINDOW): said, not
        // guessed at.
        let unplaced = match c.unplaced {
            0 => String::new(),
            n => format!(
                " ({n} more acknowledged write(s) were of values more than {} below the highest, whose earlier writes are no longer kept: repetitions among them are not counted)",
                super::counter::WINDOW
            ),
        };
        let summary = format!(
            "{lost} update(s) lost: the final read at {} returned {final_value} but {acked_n} increments were acknowledged; {} value(s) were written by more than one process{unplaced}{example}",
            secs(read.done_ns),
            dups.len(),
        );
        let mut f = Finding::new(FindingKind::LostUpdate, summary).with_indices(indices);
        f.processes = processes;
        f.count = Some(lost);
        f.window = Some(TimeWindow {
            start_ns: start,
            end_ns: read.done_ns,
        });
        findings.push(f);
    }
    if final_value > acked_n + unsure {
        let extra = (final_value - acked_n - unsure) as u64;
        let summary = format!(
            "{extra} phantom increment(s): the final read at {} returned {final_value} but only {acked_n} increments were acknowledged and {unsure} more may have happened",
            secs(read.done_ns)
        );
        let mut f = Finding::new(FindingKind::PhantomIncrement, summary)
            .with_indices(vec![read.invoke_index, read.done_index]);
        f.count = Some(extra);
        findings.push(f);
    }
    findings
}

/// How many failed acquires a deadlock finding lists as evidence.
const MAX_FAILS_LISTED: usize = 10;

/// No grant of `lock` from `a` to `b`, inside segment `seg`.
pub(crate) fn deadlock(
    lock: &str,
    seg: &Segment,
    a: u64,
    b: u64,
    faults: &[FaultWindow],
) -> Finding {
    let fails: Vec<&(u64, u64, u64)> = seg
        .fails
        .iter()
        .filter(|f| (a..=b).contains(&f.0))
        .collect();
    let mut trying: Vec<u64> = fails.iter().map(|f| f.2).collect();
    trying.sort_unstable();
    trying.dedup();
    let mut indices: Vec<u64> = fails.iter().take(MAX_FAILS_LISTED).map(|f| f.1).collect();
    let mut processes = Vec::new();
    let mut tokens = Vec::new();
    let holder_phrase = match seg.grant {
        None => "nobody had held it before".to_string(),
        Some((t, index, p, token)) => {
            indices.push(index);
            processes.push(p);
            tokens.extend(token);
            let token_phrase = token.map_or_else(String::new, |t| format!(" (token {t})"));
            let end = seg.grant_end.filter(|e| e.0 <= b).map_or_else(
                String::new,
                |(end_ns, end_index, why)| {
                    indices.push(end_index);
                    format!(" and {} at {}", why.phrase(), secs(end_ns))
                },
            );
            format!(
                "the last holder was process {p}{token_phrase}, which acquired it at {}{end}",
                secs(t)
            )
        }
    };
    for &t in &trying {
        if !processes.contains(&t) {
            processes.push(t);
        }
    }
    let trying_names: Vec<String> = trying.iter().map(|p| p.to_string()).collect();
    let summary = format!(
        "no process acquired lock {lock:?} for {} from {} to {} while clients wanted it ({} failed acquire(s) by process(es) {}); {holder_phrase}",
        secs(b - a),
        secs(a),
        secs(b),
        fails.len(),
        if trying_names.is_empty() { "none".to_string() } else { trying_names.join(", ") },
    );
    let mut f = Finding::new(FindingKind::Deadlock, summary).with_indices(indices);
    f.lock = (!lock.is_empty()).then(|| lock.to_string());
    f.processes = processes;
    f.tokens = tokens;
    f.window = Some(TimeWindow {
        start_ns: a,
        end_ns: b,
    });
    f.faults = active_during(faults, a, b).into_iter().cloned().collect();
    f
}

/// How many grants a lockout finding lists as evidence.
const MAX_GRANTS_LISTED: usize = 10;

/// Only `st.process` was granted (or held) `lock` from `a` to `b`, inside stretch `st`, while
/// other processes asked.
pub(crate) fn lockout(lock: &str, st: &Stretch, a: u64, b: u64, faults: &[FaultWindow]) -> Finding {
    let p = st.process;
    let grants: Vec<&(u64, u64)> = st
        .grants
        .iter()
        .filter(|g| (a..=b).contains(&g.0))
        .collect();
    // A failed acquire or a wanting interval that only touches the piece's start was not
    // waiting inside it.
    let fails: Vec<&(u64, u64, u64)> = st.fails.iter().filter(|f| a < f.0 && f.0 <= b).collect();
    let mut askers: Vec<u64> = st
        .wanting
        .iter()
        .filter(|w| w.0 < b && w.1 > a)
        .map(|w| w.2)
        .collect();
    askers.sort_unstable();
    askers.dedup();
    let mut indices: Vec<u64> = grants.iter().take(MAX_GRANTS_LISTED).map(|g| g.1).collect();
    indices.extend(fails.iter().take(MAX_FAILS_LISTED).map(|f| f.1));
    let end = st.end.filter(|e| e.0 <= b).map_or_else(
        || format!("; process {p} still held it at {}", secs(b)),
        |(end_ns, end_index, why)| {
            indices.push(end_index);
            format!("; process {p} {} at {}", why.phrase(), secs(end_ns))
        },
    );
    let asker_names: Vec<String> = askers.iter().map(|q| q.to_string()).collect();
    let summary = format!(
        "only process {p} was granted or held lock {lock:?} for {} from {} to {} while process(es) {} asked ({} grant(s) to process {p}, {} failed acquire(s) by the others){end}; {}",
        secs(b - a),
        secs(a),
        secs(b),
        asker_names.join(", "),
        grants.len(),
        fails.len(),
        active_phrase(&active_during(faults, a, b)),
    );
    let mut f = Finding::new(FindingKind::Lockout, summary).with_indices(indices);
    f.lock = (!lock.is_empty()).then(|| lock.to_string());
    f.processes = std::iter::once(p).chain(askers).collect();
    f.window = Some(TimeWindow {
        start_ns: a,
        end_ns: b,
    });
    f.faults = active_during(faults, a, b).into_iter().cloned().collect();
    f.count = Some(grants.len() as u64);
    f
}
