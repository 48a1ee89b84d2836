//! Linearizability of a run's lock operations against the lock model that fits the history:
//! `lease` when the lock has leases, asked for or granted (a takeover before the lease ran out
//! is the lock itself breaking), `mutex` when it has none and the lock alone must exclude. A
//! `fenced` lock without leases may lose its holder at any moment (a session expiry), so no
//! owner-tracking model fits it: it is not checked, and the resource checks carry the verdict.

use super::lock_ops::LockOps;
use super::params::Property;
use super::LinSummary;
use crate::history::Event;
use crate::lin_search::Budget;
use crate::models::Model;

/// The model a lock history is checked against under `property`, if one fits (as
/// [`LockOps::model`] decides it).
pub fn lock_model_for(events: &[Event], property: Property) -> Option<&'static dyn Model> {
    let mut ops = LockOps::default();
    for e in events {
        ops.push(&e.as_ref());
    }
    ops.model(property)
}

/// Checks the lock operations of `events` against [`lock_model_for`], one lock after another,
/// within `budget`; `None` when no model fits. Each lock is checked as the events go by, and
/// a lock that check leaves undecided or finds violated is searched from a second pass. A history the model cannot read, or a budget
/// that runs out, is `unknown` with the reason.
pub fn check_lock_linearizability(
    events: &[Event],
    property: Property,
    budget: &Budget,
) -> Option<LinSummary> {
    let mut ops = LockOps::streaming(property);
    for e in events {
        ops.push(&e.as_ref());
    }
    match ops.check(property, budget) {
        Ok(summary) => summary,
        Err(recheck) => {
            let mut again = recheck.ops();
            for e in events {
                again.push(&e.as_ref());
            }
            Some(recheck.finish(again, budget))
        }
    }
}
