//! lockpick's own history events as checker operations.

use super::pair::{Kind, Pairer, RawEvent};
use super::Imported;
use crate::history::{Event, EventKind, Process, F};
use crate::lin::{Datum, History, OpF};

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
/// out. The history's completeness is the caller's: an event stream that does not pair up is
/// still converted as well as it can be (unpaired completions are dropped).
pub fn from_events(events: &[Event]) -> History {
    from_events_lines(events).history
}

/// [`from_events`], with each operation's line (the event's place in the file, from 1).
pub fn from_events_lines(events: &[Event]) -> Imported {
    let mut pairer = Pairer::new("lockpick");
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
        let raw = RawEvent {
            process,
            kind,
            f,
            key: e.lock.clone(),
            value: value(e, f),
            pos: e.index,
            time_ns: e.time_ns,
            line: n + 1,
        };
        // Only a completion naming another operation than its invocation fails to pair;
        // skip it rather than reject the whole run's evidence.
        let _ = pairer.push(raw);
    }
    pairer.finish()
}
