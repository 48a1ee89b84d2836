//! Linearizability of a run's lock operations against the lock model that fits the history:
//! `fenced-mutex` when the resource's safety rests on tokens, `lease` when holders had leases,
//! `mutex` otherwise.

use super::params::Property;
use crate::history::{Event, EventKind, F};
use crate::lin::{check_events, Budget};
use crate::models::ModelName;
use crate::results::LinSummary;
use crate::verdict::Verdict;

/// The model a lock history is checked against under `property`.
pub fn lock_model_for(events: &[Event], property: Property) -> ModelName {
    let acquires_ok = || {
        events
            .iter()
            .filter(|e| e.f == F::Acquire && e.kind == EventKind::Ok)
    };
    let tokens = acquires_ok().any(|e| e.value.token.is_some());
    let leases = acquires_ok().any(|e| e.value.lease_ms.is_some());
    match property {
        Property::Fenced if tokens => ModelName::FencedMutex,
        _ if leases => ModelName::Lease,
        _ => ModelName::Mutex,
    }
}

/// Checks the lock operations of `events` against [`lock_model_for`], within `budget`. A
/// history the model cannot read, or a budget that runs out, is `unknown` with the reason.
pub fn check_lock_linearizability(
    events: &[Event],
    property: Property,
    budget: &Budget,
) -> LinSummary {
    let model = lock_model_for(events, property);
    match check_events(events, model, budget) {
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
    }
}
