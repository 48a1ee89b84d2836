//! Pairing invocations with their completions into operations, with Jepsen's meaning of each
//! completion type.

use super::error::ImportError;
use super::Imported;
use crate::lin::{Datum, History, Op, OpF};
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
    pending: HashMap<u64, usize>,
}

impl Pairer {
    pub fn new(format: &'static str) -> Self {
        Pairer {
            format,
            ops: Vec::new(),
            pending: HashMap::new(),
        }
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
            // A second invocation without a completion leaves the first open: lenient, and
            // what Jepsen means when a process crashed without logging.
            let arg = match e.f {
                OpF::Read | OpF::Get => Datum::Nil,
                _ => e.value,
            };
            self.pending.insert(e.process, self.ops.len());
            self.ops.push(Some((
                Op {
                    process: e.process,
                    f: e.f,
                    key: e.key,
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
        let Some(i) = self.pending.remove(&e.process) else {
            if e.kind == Kind::Ok {
                return Err(self.err(
                    e.line,
                    format!(
                        "process {} completed an operation it never invoked",
                        e.process
                    ),
                ));
            }
            return Ok(());
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
