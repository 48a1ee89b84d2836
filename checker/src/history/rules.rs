//! The one-operation-per-process rule, checked line by line as a history is read: a client
//! process has at most one operation in flight (plus one `renew` from its lease watchdog, which
//! runs beside the holder's other operations), and each completion answers the invocation in
//! flight with the same `f`. Memory is one entry per operation in flight.

use super::error::ProcessRule;
use super::event::{EventKind, EventRef, Process, F};
use std::collections::HashMap;

/// Which of a process's two slots an operation uses.
fn lane(f: F) -> bool {
    f == F::Renew
}

/// The operations in flight, per client process and lane: what was invoked and on which line.
#[derive(Debug, Default)]
pub(crate) struct ProcessRules {
    in_flight: HashMap<(u64, bool), (F, usize)>,
}

fn kind_name(kind: EventKind) -> &'static str {
    match kind {
        EventKind::Invoke => "invoke",
        EventKind::Ok => "ok",
        EventKind::Fail => "fail",
        EventKind::Info => "info",
    }
}

impl ProcessRules {
    /// Checks the event on `line` against what is in flight, and records it.
    pub fn check(&mut self, e: &EventRef<'_>, line: usize) -> Result<(), ProcessRule> {
        let Process::Client(p) = e.process else {
            return Ok(());
        };
        // A notice is a point in time, not an operation: it may come while anything is in
        // flight.
        if e.f == F::Notice {
            return Ok(());
        }
        let key = (p, lane(e.f));
        match e.kind {
            EventKind::Invoke => match self.in_flight.insert(key, (e.f, line)) {
                None => Ok(()),
                Some((pending, pending_line)) => Err(ProcessRule::TwoInFlight {
                    process: e.process,
                    f: e.f,
                    pending,
                    pending_line,
                }),
            },
            kind => match self.in_flight.remove(&key) {
                None => Err(ProcessRule::NoInvoke {
                    process: e.process,
                    kind: kind_name(kind),
                    f: e.f,
                }),
                Some((pending, _)) if pending == e.f => Ok(()),
                Some((pending, pending_line)) => Err(ProcessRule::OtherOp {
                    process: e.process,
                    kind: kind_name(kind),
                    f: e.f,
                    pending,
                    pending_line,
                }),
            },
        }
    }
}
