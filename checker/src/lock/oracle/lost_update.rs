//! Test oracle (the in-memory checker the streaming one replaced): Lost updates on the `counter` workload: the final read against the number of acknowledged
//! increments, with pairs of writes that wrote the same value (both read the same n) as proof.

use super::super::report::{Finding, FindingKind, TimeWindow};
use super::ops::{Op, Ops};
use crate::faults::secs;
use crate::history::{EventKind, F};
use std::collections::BTreeMap;

/// What the counter check found.
pub(crate) enum CounterCheck {
    /// No write carries an `int`: not a counter history, nothing to check.
    NotCounter,
    /// A counter history without a final read: cannot decide.
    NoFinalRead,
    /// Checked; the findings are violations (empty when the counter is consistent).
    Checked(Vec<Finding>),
}

/// How many duplicate-value groups a lost-update finding lists as evidence.
const MAX_PAIRS: usize = 20;

/// Precondition: the counter starts at 0 and every write writes the value its process read
/// plus one.
pub(crate) fn lost_updates(ops: &Ops<'_>) -> CounterCheck {
    let writes: Vec<_> = ops
        .ops
        .iter()
        .filter(|o| o.f == F::Write && o.invoke.value.int.is_some())
        .collect();
    if writes.is_empty() {
        return CounterCheck::NotCounter;
    }
    let is_final = |o: &&Op<'_>| {
        o.invoke.value.note.as_deref() == Some("final")
            || o.completion.and_then(|c| c.value.note.as_deref()) == Some("final")
    };
    let final_read = ops
        .ops
        .iter()
        .rev()
        .filter(|o| o.f == F::Read && o.is_ok() && is_final(o))
        .find_map(|o| Some((o, o.completion?.value.int?)));
    let Some((read, final_value)) = final_read else {
        return CounterCheck::NoFinalRead;
    };
    let read_done = read.completion.expect("final read completed");
    let acked: Vec<_> = writes.iter().filter(|o| o.is_ok()).collect();
    let unsure = writes
        .iter()
        .filter(|o| matches!(o.outcome(), Some(EventKind::Info) | None))
        .count() as i64;
    let acked_n = acked.len() as i64;

    let mut findings = Vec::new();
    if final_value < acked_n {
        let mut by_value: BTreeMap<i64, Vec<&&Op<'_>>> = BTreeMap::new();
        for o in &acked {
            by_value
                .entry(o.invoke.value.int.unwrap_or(0))
                .or_default()
                .push(o);
        }
        let dups: Vec<(i64, Vec<&&Op<'_>>)> =
            by_value.into_iter().filter(|(_, v)| v.len() > 1).collect();
        let mut indices = vec![read.invoke.index, read_done.index];
        let mut processes = Vec::new();
        let mut start = read_done.time_ns;
        for (_, group) in dups.iter().take(MAX_PAIRS) {
            for o in group {
                indices.push(o.invoke.index);
                indices.extend(o.completion.map(|c| c.index));
                processes.push(o.process);
                start = start.min(o.invoke.time_ns);
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
        let summary = format!(
            "{lost} update(s) lost: the final read at {} returned {final_value} but {acked_n} increments were acknowledged; {} value(s) were written by more than one process{example}",
            secs(read_done.time_ns),
            dups.len(),
        );
        let mut f = Finding::new(FindingKind::LostUpdate, summary).with_indices(indices);
        f.processes = processes;
        f.count = Some(lost);
        f.window = Some(TimeWindow {
            start_ns: start,
            end_ns: read_done.time_ns,
        });
        findings.push(f);
    }
    if final_value > acked_n + unsure {
        let extra = (final_value - acked_n - unsure) as u64;
        let summary = format!(
            "{extra} phantom increment(s): the final read at {} returned {final_value} but only {acked_n} increments were acknowledged and {unsure} more may have happened",
            secs(read_done.time_ns)
        );
        let mut f = Finding::new(FindingKind::PhantomIncrement, summary)
            .with_indices(vec![read.invoke.index, read_done.index]);
        f.count = Some(extra);
        findings.push(f);
    }
    CounterCheck::Checked(findings)
}
