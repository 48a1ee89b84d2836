//! The `lease` model: a mutex whose holder loses it when its lease runs out. Expiry is a
//! nondeterministic step that may happen only once the lease's duration has passed; it is
//! folded into the steps that could observe it (another acquire), so the model stays
//! deterministic for the search.
//!
//! The lease starts no earlier than the acquire's invocation, so it cannot have run out before
//! `invoked + lease`; an acquire by someone else is possible only if it returned at or after
//! that time. Renewals push the bound out the same way; a renewal that names no length renews
//! for the length its process was last granted ([`RenewLengths`]), as a keep-alive renews a
//! lease for its TTL. Operations without a lease length hold the lock until released.
//!
//! An acquire granted to the process that holds the lock is a re-entry, as with the `mutex`
//! model: it keeps the lock, and its lease pushes the bound out as a renewal does.

use super::error::ModelError;
use super::model::Model;
use super::mutex::{owner_of, Owner};
use super::split::{by_key, ends_its_process, is_lock_op};
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
    /// Per operation, whether nothing its process does can follow it
    /// ([`ends_its_process`]).
    ends: Vec<bool>,
}

/// The holder and the earliest time its lease may run out (ns on the history's clock); two
/// words, as search states are kept per memo entry and stack frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LeaseState {
    owner: Owner,
    pub expires: u64,
}

impl LeaseState {
    /// Nobody holds the lock: the state before any operation, and after a release.
    pub const FREE: LeaseState = LeaseState {
        owner: Owner::NOBODY,
        expires: 0,
    };

    pub fn owner(&self) -> Option<u64> {
        self.owner.get()
    }
}

impl Spec for LeaseSpec {
    type State = LeaseState;

    fn init(&mut self) -> LeaseState {
        LeaseState::FREE
    }

    fn step(&mut self, s: &LeaseState, op: usize) -> Option<LeaseState> {
        match self.ops[op] {
            LeaseOp::Acquire { p, expires, latest } => {
                let (next, needs) = acquire(s, p, expires);
                (needs <= latest).then_some(next)
            }
            LeaseOp::Release(p) => release(s, p),
            LeaseOp::Renew { p, expires } => renew(s, p, expires),
        }
    }

    /// An acquire or renewal that ends its process only keeps others out longer: the state
    /// after it has its owner, who never acts again, and a lease that runs out no earlier
    /// than the one before (see [`acquire`]), so every later step it allows, the state before
    /// allows too.
    fn never_needed(&self, op: usize) -> bool {
        self.ends[op]
            && matches!(
                self.ops[op],
                LeaseOp::Acquire { .. } | LeaseOp::Renew { .. }
            )
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

// The steps, one function per operation: the one definition of the model, which the search
// and the streaming check ([`crate::lock::LockOps`]) both step.

/// An acquire by `p` whose lease runs out no earlier than `expires`, in `s`: the state after
/// it, and the earliest return (ns) that allows it (the holder's lease must have been able
/// to run out by then; 0 when nothing is needed). The streaming check takes an acquire
/// before it returns, so the bound is given back rather than tested here.
///
/// The new holder keeps the lock no earlier than the old holder's lease could run out as
/// well: it was granted no earlier than that, and holds it from its grant. Taking only its
/// own lease's bound would let an acquire invoked long ago and never answered take over a
/// live lease "after" it ran out and hand the lock on at once, hiding a double grant.
pub(crate) fn acquire(s: &LeaseState, p: Owner, expires: u64) -> (LeaseState, u64) {
    let needs = if s.owner.is_nobody() || s.owner == p {
        0
    } else {
        s.expires
    };
    let next = LeaseState {
        owner: p,
        expires: s.expires.max(expires),
    };
    (next, needs)
}

/// A release by `p` in `s`.
pub(crate) fn release(s: &LeaseState, p: Owner) -> Option<LeaseState> {
    (s.owner == p).then_some(LeaseState::FREE)
}

/// A renewal by `p` whose lease runs out no earlier than `expires`, in `s`.
pub(crate) fn renew(s: &LeaseState, p: Owner, expires: u64) -> Option<LeaseState> {
    (s.owner == p).then_some(LeaseState {
        owner: s.owner,
        expires: s.expires.max(expires),
    })
}

/// When a lease of `arg` ms taken at `start_ns` runs out at the earliest; `u64::MAX` for no
/// lease.
pub(crate) fn lease_end(start_ns: u64, arg: &Datum) -> u64 {
    match arg {
        Datum::Int(ms) if *ms >= 0 => {
            start_ns.saturating_add((*ms as u64).saturating_mul(1_000_000))
        }
        _ => u64::MAX,
    }
}

/// The length a renewal renews for, per holder: one that names none (an etcd keep-alive, a
/// ZooKeeper session heartbeat) renews for the length its holder last asked for, since that
/// is what the server grants it again. Without this, a renewal without a length would hold the
/// lock for good, and every grant after the holder's lease ran out would look impossible. One
/// rule for the search and the streaming check, so they read a renewal alike.
#[derive(Debug, Default)]
pub(crate) struct RenewLengths<K>(std::collections::HashMap<K, i64>);

impl<K: std::hash::Hash + Eq> RenewLengths<K> {
    /// `holder` asked for a lock with a lease of `arg` ms (none for a lock without one).
    pub fn asked(&mut self, holder: K, arg: Option<i64>) {
        match arg {
            Some(ms) => self.0.insert(holder, ms),
            None => self.0.remove(&holder),
        };
    }

    /// The length a renewal by `holder` that asked for `arg` renews for.
    pub fn renews(&self, holder: &K, arg: Option<i64>) -> Option<i64> {
        arg.or_else(|| self.0.get(holder).copied())
    }
}

/// Prepares one part per lock. The acquire's argument is its lease length in ms.
fn parts(model: &'static str, history: &History) -> Result<Vec<Part<LeaseSpec>>, ModelError> {
    let mut parts = Vec::new();
    for (key, idx) in by_key(history, |i| is_lock_op(history.ops[i].f)) {
        let mut ops = Vec::with_capacity(idx.len());
        let mut lengths = RenewLengths::default();
        for &i in &idx {
            let op = &history.ops[i];
            let p = owner_of(model, i, op)?;
            let ms = match op.arg {
                Datum::Int(ms) => Some(ms),
                _ => None,
            };
            if op.f == OpF::Acquire {
                lengths.asked(op.process, ms);
            }
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
                    expires: lease_end(
                        op.call_ns,
                        &lengths
                            .renews(&op.process, ms)
                            .map_or(Datum::Nil, Datum::Int),
                    ),
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
        let ends = ends_its_process(history, &idx);
        parts.push(Part {
            label: format!("lock {key:?}"),
            ops: idx,
            spec: LeaseSpec { ops, ends },
        });
    }
    Ok(parts)
}
