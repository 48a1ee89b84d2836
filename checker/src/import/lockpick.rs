//! lockpick's own history events as checker operations.

use super::error::ImportError;
use super::pair::{Kind, Pairer, RawEvent};
use super::Imported;
use crate::history::{Event, EventKind, Process, F};
use crate::lin_search::{Datum, History, OpF};

fn op_f(f: F) -> Option<OpF> {
    Some(match f {
        F::Acquire => OpF::Acquire,
        F::Release => OpF::Release,
        F::Renew => OpF::Renew,
        F::Write => OpF::Write,
        F::Read => OpF::Read,
        F::Cas => OpF::Cas,
        _ => return None,
    })
}

/// The event's argument (on invoke) or result (on ok), by operation.
fn value(e: &Event, f: OpF) -> Datum {
    let v = &e.value;
    let int = |x: Option<i64>| x.map_or(Datum::Nil, Datum::Int);
    let uint = |x: Option<u64>| {
        x.and_then(|x| i64::try_from(x).ok())
            .map_or(Datum::Nil, Datum::Int)
    };
    match (f, e.kind) {
        (OpF::Cas, _) => match (v.from, v.to) {
            (Some(a), Some(b)) => Datum::Pair(a, b),
            _ => Datum::Nil,
        },
        (OpF::Acquire | OpF::Renew, EventKind::Invoke) => uint(v.lease_ms),
        (OpF::Acquire, _) => uint(v.token),
        _ => int(v.int),
    }
}

/// Converts events into operations, keyed by lock. Nemesis events and fault verbs are left
/// out. A completion without its invocation, or a second invocation of a process with one in
/// flight, is an error naming the event's line: dropping either could hide a double holder.
/// A renewal may be in flight beside the process's write: the watchdog renews as it writes.
pub fn from_events(events: &[Event]) -> Result<History, ImportError> {
    from_events_lines(events).map(|i| i.history)
}

/// [`from_events`], with each operation's line (the event's place in the file, from 1).
pub fn from_events_lines(events: &[Event]) -> Result<Imported, ImportError> {
    let mut pairer = Pairer::new("lockpick").renewals_apart();
    for (n, e) in events.iter().enumerate() {
        let (Process::Client(process), Some(f)) = (e.process, op_f(e.f)) else {
            continue;
        };
        let kind = match e.kind {
            EventKind::Invoke => Kind::Invoke,
            EventKind::Ok => Kind::Ok,
            EventKind::Fail => Kind::Fail,
            EventKind::Info => Kind::Info,
        };
        pairer.push(RawEvent {
            process,
            kind,
            f,
            key: e.lock.clone(),
            value: value(e, f),
            pos: e.index,
            time_ns: e.time_ns,
            line: n + 1,
        })?;
    }
    Ok(pairer.finish())
}
