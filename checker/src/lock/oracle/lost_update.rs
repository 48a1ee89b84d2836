//! Test oracle (the in-memory checker the streaming one replaced): Lost updates on the `counter` workload: the final read against the number of acknowledged
//! increments, with pairs of writes that wrote the same value (both read the same n) as proof.

use super::super::report::Finding;
use super::ops::{Op, Ops};
use crate::history::{EventKind, F};
use crate::lock::stream::counter::{Counter, FinalRead};
use crate::lock::stream::describe;
use crate::lock::stream::stale::Write;

/// What the counter check found.
pub(crate) enum CounterCheck {
    /// No write carries an `int`: not a counter history, nothing to check.
    NotCounter,
    /// A counter history without a final read: cannot decide.
    NoFinalRead,
    /// Checked; the findings are violations (empty when the counter is consistent).
    Checked(Vec<Finding>),
}

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
    let mut counter = Counter::default();
    counter.writes = writes.len() as u64;
    counter.final_read = Some(FinalRead {
        invoke_index: read.invoke.index,
        done_index: read_done.index,
        done_ns: read_done.time_ns,
        value: final_value,
    });
    for o in &writes {
        match o.outcome() {
            Some(EventKind::Ok) => {
                let done = o.completion.expect("acknowledged writes completed");
                counter.acked(
                    o.invoke.value.int.unwrap_or(0),
                    Write {
                        process: o.process,
                        token: o.token().unwrap_or(0),
                        invoke_ns: o.invoke.time_ns,
                        invoke_index: o.invoke.index,
                        done_ns: done.time_ns,
                        done_index: done.index,
                    },
                );
            }
            Some(EventKind::Fail) => counter.failed += 1,
            Some(EventKind::Info | EventKind::Invoke) | None => {}
        }
    }
    let unsure = writes
        .iter()
        .filter(|o| matches!(o.outcome(), Some(EventKind::Info) | None))
        .count() as i64;
    let findings = describe::counter(&counter, unsure);
    CounterCheck::Checked(findings)
}
