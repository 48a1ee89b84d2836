//! Linearizability of a run's lock operations against the lock model that fits the history:
//! `lease` when holders had leases (a takeover before the lease ran out is the lock itself
//! breaking), `mutex` when they had none and the lock alone must exclude. A `fenced` lock
//! without leases may lose its holder at any moment (a session expiry), so no owner-tracking
//! model fits it: it is not checked, and the resource checks carry the verdict.

use super::params::Property;
use crate::history::{Event, EventKind, F};
use crate::lin::{check_events, Budget};
use crate::models::ModelName;
use crate::results::LinSummary;
use crate::verdict::Verdict;

/// The model a lock history is checked against under `property`, if one fits.
pub fn lock_model_for(events: &[Event], property: Property) -> Option<ModelName> {
    let leases = events
        .iter()
        .any(|e| e.f == F::Acquire && e.kind == EventKind::Ok && e.value.lease_ms.is_some());
    match property {
        _ if leases => Some(ModelName::Lease),
        Property::Exclusive => Some(ModelName::Mutex),
        Property::Fenced => None,
    }
}

/// Checks the lock operations of `events` against [`lock_model_for`], within `budget`; `None`
/// when no model fits. A history the model cannot read, or a budget that runs out, is
/// `unknown` with the reason.
pub fn check_lock_linearizability(
    events: &[Event],
    property: Property,
    budget: &Budget,
) -> Option<LinSummary> {
    let model = lock_model_for(events, property)?;
    Some(match check_events(events, model, budget) {
        Ok(report) => LinSummary {
            model: model.to_string(),
            verdict: report.verdict,
            elapsed_ms: (report.elapsed + report.explain_elapsed).as_secs_f64() * 1e3,
            ops: report.ops as u64,
            explanation: report.violation.is_some().then(|| report.to_string()),
            unknown_reason: report.unknown_reason.clone(),
        },
        Err(e) => LinSummary {
            model: model.to_string(),
            verdict: Verdict::Unknown,
            elapsed_ms: 0.0,
            ops: 0,
            explanation: None,
            unknown_reason: Some(format!("the {model} model cannot read this history: {e}")),
        },
    })
}
