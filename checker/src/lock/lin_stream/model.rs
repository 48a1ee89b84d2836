//! The lock models as the streaming check steps them: an operation in flight carries what the
//! models read of it (who, what, when its lease runs out), and each model's step is the one
//! the search steps ([`crate::models::mutex::step`], [`crate::models::lease`]), so the two
//! checks cannot read an operation differently.

use crate::lin_search::{Datum, OpF};
use crate::models::lease::{self, LeaseState};
use crate::models::mutex::{self, LockOp, MutexState, Owner};
use std::hash::Hash;

/// An operation invoked and not known to have failed, as the models read it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pending {
    pub owner: Owner,
    pub f: OpF,
    /// When the lease it asked for runs out at the earliest ([`lease::lease_end`]).
    pub expires: u64,
}

impl Pending {
    /// `arg` is the lease asked for in ms (acquire, renew), as the search's operation holds
    /// it.
    pub fn new(owner: Owner, f: OpF, arg: Option<i64>, call_ns: u64) -> Pending {
        let arg = arg.map_or(Datum::Nil, Datum::Int);
        Pending {
            owner,
            f,
            expires: lease::lease_end(call_ns, &arg),
        }
    }
}

/// A model the streaming check can step.
pub(crate) trait StreamModel {
    type State: Copy + Eq + Hash + std::fmt::Debug;
    /// The state before any operation.
    const INIT: Self::State;
    /// The state after `op` in `s` and the earliest return (ns) of `op` that allows the step
    /// (0 when any does), or `None` when `op` cannot take effect in `s`.
    fn step(s: &Self::State, op: &Pending) -> Option<(Self::State, u64)>;
}

/// The `mutex` model (no fencing: the run's lock model never reads tokens).
#[derive(Debug)]
pub(crate) struct Mutex;

impl StreamModel for Mutex {
    type State = MutexState;
    const INIT: MutexState = MutexState::FREE;

    fn step(s: &MutexState, op: &Pending) -> Option<(MutexState, u64)> {
        let op = match op.f {
            OpF::Acquire => LockOp::Acquire(op.owner, None),
            OpF::Release => LockOp::Release(op.owner),
            OpF::Renew => LockOp::Renew(op.owner),
            _ => return None,
        };
        mutex::step(false, s, op).map(|next| (next, 0))
    }
}

/// The `lease` model.
#[derive(Debug)]
pub(crate) struct Lease;

impl StreamModel for Lease {
    type State = LeaseState;
    const INIT: LeaseState = LeaseState::FREE;

    fn step(s: &LeaseState, op: &Pending) -> Option<(LeaseState, u64)> {
        match op.f {
            OpF::Acquire => Some(lease::acquire(s, op.owner, op.expires)),
            OpF::Release => lease::release(s, op.owner).map(|next| (next, 0)),
            OpF::Renew => lease::renew(s, op.owner, op.expires).map(|next| (next, 0)),
            _ => None,
        }
    }
}
