//! The `mutex` and `fenced-mutex` models: a lock with an owner (unlike Knossos' ownerless
//! mutex, only the holder may release or renew it), optionally requiring every new holder's
//! fencing token to exceed the previous holder's. Split per lock.
//!
//! An acquire granted to the process that already holds the lock is a re-entry, not a second
//! holder: mutual exclusion is between processes. A process acquires while it holds only after
//! its release failed (a failed release did not happen), and a reentrant lock grants that at
//! once: Redisson's `RLock` counts re-entries per thread, and a `MultiLock` whose `unlock()`
//! stopped at a sub-lock a crashed server forgot still holds the rest. A non-reentrant lock
//! makes the process wait until its own lease ran out, which the models accept as well. A
//! re-entry's token may repeat the holder's, never go below it.

use super::error::ModelError;
use super::model::Model;
use super::split::{by_key, ends_its_process, is_lock_op};
use super::vocabulary::{LOCK, RESOURCE};
use crate::lin_search::{check_parts, Budget, Datum, History, LinReport, OpF, Part, Spec};

/// `mutex`: only the holder may release or renew.
pub static MUTEX: MutexModel = MutexModel {
    name: "mutex",
    fenced: false,
};

/// `fenced-mutex`: a mutex whose every new holder's fencing token exceeds the previous one's.
pub static FENCED_MUTEX: MutexModel = MutexModel {
    name: "fenced-mutex",
    fenced: true,
};

/// The mutex models, with or without fencing tokens.
pub struct MutexModel {
    name: &'static str,
    fenced: bool,
}

impl Model for MutexModel {
    fn name(&self) -> &'static str {
        self.name
    }

    fn takes(&self) -> &'static [OpF] {
        LOCK
    }

    fn passes_over(&self) -> &'static [OpF] {
        RESOURCE
    }

    fn check(&self, history: &History, budget: &Budget) -> Result<LinReport, ModelError> {
        let parts = parts(self.name, history, self.fenced)?;
        Ok(check_parts(self.name, history, parts, budget))
    }
}

/// A lock operation as the mutex models step it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum LockOp {
    /// Acquire by a process, with the token granted when known.
    Acquire(Owner, Option<u64>),
    Release(Owner),
    Renew(Owner),
}

/// The specification of one lock.
#[derive(Clone)]
pub struct MutexSpec {
    ops: Vec<LockOp>,
    fenced: bool,
    /// Per operation, whether nothing its process does can follow it
    /// ([`ends_its_process`]).
    ends: Vec<bool>,
}

/// A process id or nobody, in one word: `p + 1`, 0 for nobody. Search states are kept once
/// per memo entry and per stack frame, so a history of millions of lock operations pays for
/// every byte of them (an `Option<u64>` takes two words).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Owner(u64);

impl Owner {
    pub const NOBODY: Owner = Owner(0);

    /// Process `p`; `None` for the one id that does not fit, `u64::MAX`.
    pub fn of(p: u64) -> Option<Owner> {
        p.checked_add(1).map(Owner)
    }

    pub fn get(self) -> Option<u64> {
        self.0.checked_sub(1)
    }

    pub fn is_nobody(self) -> bool {
        self.0 == 0
    }
}

/// `Owner::of(p)`, or the model error for a process id it cannot hold.
pub(super) fn owner_of(
    model: &'static str,
    i: usize,
    op: &crate::lin_search::Op,
) -> Result<Owner, ModelError> {
    Owner::of(op.process).ok_or_else(|| {
        ModelError::new(
            model,
            i,
            op,
            "process id 18446744073709551615 is out of range",
        )
    })
}

/// Who holds the lock, and the highest fencing token granted so far (`token + 1`, 0 for none:
/// tokens are read from non-negative int64s, so the sum never overflows). Two words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MutexState {
    owner: Owner,
    last_token: u64,
}

impl MutexState {
    /// Nobody holds the lock and no token was granted: the state before any operation.
    pub const FREE: MutexState = MutexState {
        owner: Owner::NOBODY,
        last_token: 0,
    };

    pub fn owner(&self) -> Option<u64> {
        self.owner.get()
    }

    pub fn last_token(&self) -> Option<u64> {
        self.last_token.checked_sub(1)
    }
}

impl Spec for MutexSpec {
    type State = MutexState;

    fn init(&mut self) -> MutexState {
        MutexState::FREE
    }

    fn step(&mut self, s: &MutexState, op: usize) -> Option<MutexState> {
        step(self.fenced, s, self.ops[op])
    }

    fn read_only(&self, op: usize) -> bool {
        matches!(self.ops[op], LockOp::Renew(_))
    }

    /// An acquire that ends its process can only keep the lock from everyone else for
    /// good (its owner never releases it), and raises no token bar an unknown token could
    /// not; a renewal changes nothing.
    fn never_needed(&self, op: usize) -> bool {
        self.ends[op] && matches!(self.ops[op], LockOp::Acquire(..) | LockOp::Renew(_))
    }

    fn describe(&self, s: &MutexState) -> String {
        let owner = match s.owner() {
            Some(p) => format!("held by process {p}"),
            None => "free".to_string(),
        };
        match (self.fenced, s.last_token()) {
            (true, Some(t)) => format!("{owner}, last token {t}"),
            (true, None) => format!("{owner}, no token granted yet"),
            (false, _) => owner,
        }
    }
}

/// The state after `op` in `s`, or `None` when `op` cannot take effect there: the one
/// definition of the models, which the search and the streaming check
/// ([`crate::lock::LockOps`]) both step.
pub(crate) fn step(fenced: bool, s: &MutexState, op: LockOp) -> Option<MutexState> {
    match op {
        LockOp::Acquire(p, token) => {
            let reentry = s.owner == p;
            if !s.owner.is_nobody() && !reentry {
                return None;
            }
            let mut last = s.last_token;
            if fenced {
                if let Some(t) = token {
                    let below = s
                        .last_token()
                        .is_some_and(|l| t < l || (t == l && !reentry));
                    if below {
                        return None;
                    }
                    last = last.max(t + 1);
                }
            }
            Some(MutexState {
                owner: p,
                last_token: last,
            })
        }
        LockOp::Release(p) => (s.owner == p).then_some(MutexState {
            owner: Owner::NOBODY,
            ..*s
        }),
        LockOp::Renew(p) => (s.owner == p).then_some(*s),
    }
}

/// Reads the token an acquire returned, if it returned one (a non-negative int64).
pub(super) fn token(out: &Option<Datum>) -> Option<u64> {
    match out {
        Some(Datum::Int(t)) => u64::try_from(*t).ok(),
        _ => None,
    }
}

/// Prepares one part per lock (the operation's key).
fn parts(
    model: &'static str,
    history: &History,
    fenced: bool,
) -> Result<Vec<Part<MutexSpec>>, ModelError> {
    let mut parts = Vec::new();
    for (key, idx) in by_key(history, |i| is_lock_op(history.ops[i].f)) {
        let mut ops = Vec::with_capacity(idx.len());
        for &i in &idx {
            let op = &history.ops[i];
            let p = owner_of(model, i, op)?;
            ops.push(match op.f {
                OpF::Acquire => LockOp::Acquire(p, token(&op.out)),
                OpF::Release => LockOp::Release(p),
                OpF::Renew => LockOp::Renew(p),
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
        let ends = ends_its_process(history, &idx);
        parts.push(Part {
            label: format!("lock {key:?}"),
            ops: idx,
            spec: MutexSpec { ops, fenced, ends },
        });
    }
    Ok(parts)
}
