//! One lock's operations held whole, in a compact form, for the search: what a check that
//! keeps every operation holds until the end, and what a second reading gathers of a lock the
//! streaming check could not decide or found violated.

use crate::lin_search::{Datum, History, Op, OpF};

/// A lock operation, as small as it can be kept (64 bytes): a history of millions of lock
/// operations is held until it is checked.
#[derive(Debug, Clone, Copy)]
pub(super) struct KeptOp {
    pub process: u64,
    pub call: u64,
    /// [`NONE`] while open or unknown.
    pub ret: u64,
    pub call_ns: u64,
    pub ret_ns: u64,
    /// The lease asked for (acquire, renew), or the `int` of a release, if [`HAS_ARG`].
    pub arg: i64,
    /// The token granted to an acquire, if [`HAS_TOKEN`].
    pub token: i64,
    pub f: OpF,
    pub flags: u8,
}

pub(super) const NONE: u64 = u64::MAX;
pub(super) const HAS_ARG: u8 = 1;
/// Completed `ok`.
pub(super) const DONE: u8 = 2;
pub(super) const HAS_TOKEN: u8 = 4;
/// Completed `fail`: did not happen, left out.
pub(super) const FAILED: u8 = 8;

/// Operations per chunk: storage grows by chunks, never by doubling one huge buffer.
const CHUNK: usize = 1 << 16;

/// One lock's operations, in invocation order.
#[derive(Debug, Default)]
pub(super) struct KeptOps {
    chunks: Vec<Vec<KeptOp>>,
    len: usize,
}

impl KeptOps {
    pub fn push(&mut self, op: KeptOp) -> usize {
        if self.chunks.last().is_none_or(|c| c.len() == CHUNK) {
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        self.chunks.last_mut().expect("a chunk").push(op);
        self.len += 1;
        self.len - 1
    }

    pub fn get_mut(&mut self, at: usize) -> &mut KeptOp {
        &mut self.chunks[at / CHUNK][at % CHUNK]
    }

    /// The operations that did not fail (`kept` of them), as the checker's history; each
    /// chunk is freed once copied.
    pub fn into_history(self, kept: usize) -> History {
        let mut ops = Vec::with_capacity(kept);
        for chunk in self.chunks {
            ops.extend(
                chunk
                    .into_iter()
                    .filter(|o| o.flags & FAILED == 0)
                    .map(expand),
            );
        }
        History { ops }
    }
}

fn expand(o: KeptOp) -> Op {
    let datum = |has: bool, x: i64| if has { Datum::Int(x) } else { Datum::Nil };
    let done = o.flags & DONE != 0;
    Op {
        process: o.process,
        f: o.f,
        key: None,
        arg: datum(o.flags & HAS_ARG != 0, o.arg),
        out: done.then(|| datum(o.flags & HAS_TOKEN != 0, o.token)),
        call: o.call,
        ret: done.then_some(o.ret),
        call_ns: o.call_ns,
        ret_ns: done.then_some(o.ret_ns),
    }
}
