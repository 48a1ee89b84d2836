//! The `lease` model: a mutex whose holder loses it when its lease runs out. Expiry is a
//! nondeterministic step that may happen only once the lease's duration has passed; it is
//! folded into the steps that could observe it (another acquire), so the model stays
//! deterministic for the search.
//!
//! The lease starts no earlier than the acquire's invocation, so it cannot have run out before
//! `invoked + lease`; an acquire by someone else is possible only if it returned at or after
//! that time. Renewals push the bound out the same way. Operations without a lease length hold
//! the lock until released.
//!
//! An acquire granted to the process that holds the lock is a re-entry, as with the `mutex`
//! model: it keeps the lock, and its lease pushes the bound out as a renewal does.

use super::error::ModelError;
use super::model::Model;
use super::mutex::{owner_of, Owner};
use super::split::{by_key, is_lock_op};
use super::vocabulary::{LOCK, RESOURCE};
use crate::lin_search::{check_parts, Budget, Datum, History, LinReport, OpF, Part, Spec};

/// `lease`: a mutex whose holder may lose it once its lease has run out.
pub static LEASE: LeaseModel = LeaseModel;

/// The lease model.
pub struct LeaseModel;

impl Model for LeaseModel {
    fn name(&self) -> &'static str {
        "lease"
    }

    fn takes(&self) -> &'static [OpF] {
        LOCK
    }

    fn passes_over(&self) -> &'static [OpF] {
        RESOURCE
    }

    fn check(&self, history: &History, budget: &Budget) -> Result<LinReport, ModelError> {
        let parts = parts(self.name(), history)?;
        Ok(check_parts(self.name(), history, parts, budget))
    }
}

#[derive(Debug, Clone, Copy)]
enum LeaseOp {
    /// Process, earliest time the granted lease can run out, latest time the acquire can
    /// have taken effect.
    Acquire {
        p: Owner,
        expires: u64,
        latest: u64,
    },
    Release(Owner),
    Renew {
        p: Owner,
        expires: u64,
    },
}

/// The specification of one lock.
#[derive(Clone)]
pub struct LeaseSpec {
    ops: Vec<LeaseOp>,
}

/// The holder and the earliest time its lease may run out (ns on the history's clock); two
/// words, as search states are kept per memo entry and stack frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LeaseState {
    owner: Owner,
    pub expires: u64,
}

impl LeaseState {
    pub fn owner(&self) -> Option<u64> {
        self.owner.get()
    }
}

impl Spec for LeaseSpec {
    type State = LeaseState;

    fn init(&mut self) -> LeaseState {
        LeaseState {
            owner: Owner::NOBODY,
            expires: 0,
        }
    }

    fn step(&mut self, s: &LeaseState, op: usize) -> Option<LeaseState> {
        match self.ops[op] {
            LeaseOp::Acquire { p, expires, latest } => {
                if s.owner == p {
                    return Some(LeaseState {
                        owner: p,
                        expires: s.expires.max(expires),
                    });
                }
                let free = s.owner.is_nobody() || s.expires <= latest;
                free.then_some(LeaseState { owner: p, expires })
            }
            LeaseOp::Release(p) => (s.owner == p).then_some(LeaseState {
                owner: Owner::NOBODY,
                expires: 0,
            }),
            LeaseOp::Renew { p, expires } => (s.owner == p).then_some(LeaseState {
                owner: s.owner,
                expires: s.expires.max(expires),
            }),
        }
    }

    fn describe(&self, s: &LeaseState) -> String {
        match s.owner() {
            Some(p) if s.expires == u64::MAX => format!("held by process {p}, no lease"),
            Some(p) => format!(
                "held by process {p}, lease runs out no earlier than {:.3} ms",
                s.expires as f64 / 1e6
            ),
            None => "free".to_string(),
        }
    }
}

fn lease_end(start_ns: u64, arg: &Datum) -> u64 {
    match arg {
        Datum::Int(ms) if *ms >= 0 => {
            start_ns.saturating_add((*ms as u64).saturating_mul(1_000_000))
        }
        _ => u64::MAX,
    }
}

/// Prepares one part per lock. The acquire's argument is its lease length in ms.
fn parts(model: &'static str, history: &History) -> Result<Vec<Part<LeaseSpec>>, ModelError> {
    let mut parts = Vec::new();
    for (key, idx) in by_key(history, |i| is_lock_op(history.ops[i].f)) {
        let mut ops = Vec::with_capacity(idx.len());
        for &i in &idx {
            let op = &history.ops[i];
            let p = owner_of(model, i, op)?;
            ops.push(match op.f {
                OpF::Acquire => LeaseOp::Acquire {
                    p,
                    expires: lease_end(op.call_ns, &op.arg),
                    latest: if op.is_open() {
                        u64::MAX
                    } else {
                        op.ret_ns.unwrap_or(u64::MAX)
                    },
                },
                OpF::Release => LeaseOp::Release(p),
                OpF::Renew => LeaseOp::Renew {
                    p,
                    expires: lease_end(op.call_ns, &op.arg),
                },
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
            spec: LeaseSpec { ops },
        });
    }
    Ok(parts)
}
