//! Pairing invocations with their completions into operations, with Jepsen's meaning of each
//! completion type.

use super::error::ImportError;
use super::Imported;
use crate::lin_search::{Datum, History, Op, OpF};
use std::collections::HashMap;

/// Jepsen's event types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Invoke,
    Ok,
    /// Did not take effect: the operation is left out.
    Fail,
    /// Outcome unknown: the operation stays open to the end of the history.
    Info,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Invoke => "invoke",
            Kind::Ok => "ok",
            Kind::Fail => "fail",
            Kind::Info => "info",
        }
    }

    pub fn from_name(s: &str) -> Option<Kind> {
        Some(match s {
            "invoke" => Kind::Invoke,
            "ok" => Kind::Ok,
            "fail" => Kind::Fail,
            "info" => Kind::Info,
            _ => return None,
        })
    }
}

/// One event of a client process, format independent.
#[derive(Debug, Clone)]
pub struct RawEvent {
    pub process: u64,
    pub kind: Kind,
    pub f: OpF,
    pub key: Option<String>,
    pub value: Datum,
    /// Position in the history; orders events.
    pub pos: u64,
    pub time_ns: u64,
    /// Line in the source, for errors.
    pub line: usize,
}

/// Builds operations from events in history order.
pub struct Pairer {
    format: &'static str,
    /// With the source line of each operation's invocation.
    ops: Vec<Option<(Op, usize)>>,
    /// The operation in flight per process and lane.
    pending: HashMap<(u64, bool), usize>,
    /// Renewals have a lane of their own (see [`Pairer::renewals_apart`]).
    renew_lane: bool,
}

impl Pairer {
    pub fn new(format: &'static str) -> Self {
        Pairer {
            format,
            ops: Vec::new(),
            pending: HashMap::new(),
            renew_lane: false,
        }
    }

    /// Lets a renewal be in flight beside another operation of the same process: lockpick's
    /// renewal watchdog extends the lease while its client writes, as one process. Two
    /// renewals, or two other operations, in flight at once are still refused.
    pub fn renewals_apart(mut self) -> Self {
        self.renew_lane = true;
        self
    }

    fn lane(&self, e: &RawEvent) -> (u64, bool) {
        (e.process, self.renew_lane && e.f == OpF::Renew)
    }

    fn err(&self, line: usize, message: String) -> ImportError {
        ImportError::Parse {
            format: self.format,
            line,
            message,
        }
    }

    pub fn push(&mut self, e: RawEvent) -> Result<(), ImportError> {
        if e.kind == Kind::Invoke {
            // A process runs one operation at a time (Jepsen gives a crashed process's
            // successor a new number): a second invocation in flight could hide a double
            // holder if the first were quietly left open, so it is refused.
            let lane = self.lane(&e);
            if let Some(&i) = self.pending.get(&lane) {
                let (first, line) = self.ops[i].as_ref().expect("pending op is present");
                return Err(self.err(
                    e.line,
                    format!(
                        "process {} invokes {} while its {} of line {line} has not completed; a process runs one operation at a time",
                        e.process, e.f, first.f
                    ),
                ));
            }
            let arg = match e.f {
                OpF::Read | OpF::Get => Datum::Nil,
                _ => e.value,
            };
            self.pending.insert(lane, self.ops.len());
            self.ops.push(Some((
                Op {
                    process: e.process,
                    f: e.f,
                    key: e.key.map(String::into_boxed_str),
                    arg,
                    out: None,
                    call: e.pos,
                    ret: None,
                    call_ns: e.time_ns,
                    ret_ns: None,
                },
                e.line,
            )));
            return Ok(());
        }
        let Some(i) = self.pending.remove(&self.lane(&e)) else {
            return Err(self.err(
                e.line,
                format!(
                    "process {} completed {} ({}) without invoking it",
                    e.process,
                    e.f,
                    e.kind.name()
                ),
            ));
        };
        let invoked = self.ops[i].as_ref().expect("pending op is present").0.f;
        if invoked != e.f {
            return Err(self.err(
                e.line,
                format!(
                    "process {} invoked {invoked} but completed {}",
                    e.process, e.f
                ),
            ));
        }
        let op = &mut self.ops[i].as_mut().expect("pending op is present").0;
        match e.kind {
            Kind::Ok => {
                op.out = Some(match e.f {
                    OpF::Read | OpF::Get | OpF::Acquire => e.value,
                    _ => Datum::Nil,
                });
                op.ret = Some(e.pos);
                op.ret_ns = Some(e.time_ns);
            }
            Kind::Fail => self.ops[i] = None,
            Kind::Info | Kind::Invoke => {}
        }
        Ok(())
    }

    pub fn finish(self) -> Imported {
        let (ops, lines) = self.ops.into_iter().flatten().unzip();
        Imported {
            history: History { ops },
            lines,
        }
    }
}
