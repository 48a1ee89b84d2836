//! The `mutex` and `fenced-mutex` models: a lock with an owner (unlike Knossos' ownerless
//! mutex, only the holder may release or renew it), optionally requiring every new holder's
//! fencing token to exceed the previous holder's. Split per lock.

use super::error::ModelError;
use super::split::{by_key, is_lock_op};
use crate::lin::{Datum, History, OpF, Part, Spec};

#[derive(Debug, Clone, Copy)]
enum LockOp {
    /// Acquire by a process, with the token granted when known.
    Acquire(u64, Option<u64>),
    Release(u64),
    Renew(u64),
}

/// The specification of one lock.
#[derive(Clone)]
pub struct MutexSpec {
    ops: Vec<LockOp>,
    fenced: bool,
}

/// Who holds the lock, and the highest fencing token granted so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MutexState {
    pub owner: Option<u64>,
    pub last_token: Option<u64>,
}

impl Spec for MutexSpec {
    type State = MutexState;

    fn init(&mut self) -> MutexState {
        MutexState {
            owner: None,
            last_token: None,
        }
    }

    fn step(&mut self, s: &MutexState, op: usize) -> Option<MutexState> {
        match self.ops[op] {
            LockOp::Acquire(p, token) => {
                if s.owner.is_some() {
                    return None;
                }
                let mut last = s.last_token;
                if self.fenced {
                    if let Some(t) = token {
                        if s.last_token.is_some_and(|l| t <= l) {
                            return None;
                        }
                        last = Some(t);
                    }
                }
                Some(MutexState {
                    owner: Some(p),
                    last_token: last,
                })
            }
            LockOp::Release(p) => (s.owner == Some(p)).then_some(MutexState { owner: None, ..*s }),
            LockOp::Renew(p) => (s.owner == Some(p)).then_some(*s),
        }
    }

    fn read_only(&self, op: usize) -> bool {
        matches!(self.ops[op], LockOp::Renew(_))
    }

    fn describe(&self, s: &MutexState) -> String {
        let owner = match s.owner {
            Some(p) => format!("held by process {p}"),
            None => "free".to_string(),
        };
        match (self.fenced, s.last_token) {
            (true, Some(t)) => format!("{owner}, last token {t}"),
            (true, None) => format!("{owner}, no token granted yet"),
            (false, _) => owner,
        }
    }
}

/// Reads the token an acquire returned, if it returned one.
pub(super) fn token(out: &Option<Datum>) -> Option<u64> {
    match out {
        Some(Datum::Int(t)) => u64::try_from(*t).ok(),
        _ => None,
    }
}

/// Prepares one part per lock (the operation's key).
pub fn parts(history: &History, fenced: bool) -> Result<Vec<Part<MutexSpec>>, ModelError> {
    let model = if fenced { "fenced-mutex" } else { "mutex" };
    let mut parts = Vec::new();
    for (key, idx) in by_key(history, |i| is_lock_op(history.ops[i].f)) {
        let mut ops = Vec::with_capacity(idx.len());
        for &i in &idx {
            let op = &history.ops[i];
            ops.push(match op.f {
                OpF::Acquire => LockOp::Acquire(op.process, token(&op.out)),
                OpF::Release => LockOp::Release(op.process),
                OpF::Renew => LockOp::Renew(op.process),
                _ => {
                    return Err(ModelError::new(
                        model,
                        i,
                        op,
                        "the model has no such operation",
                    ))
                }
            });
        }
        parts.push(Part {
            label: format!("lock {key:?}"),
            ops: idx,
            spec: MutexSpec { ops, fenced },
        });
    }
    Ok(parts)
}
