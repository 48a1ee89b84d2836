//! The linearizability check of a run's lock operations, as `results.json` stores it.

use crate::verdict::Verdict;
use serde::{Deserialize, Serialize};

/// The linearizability check of a run, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinSummary {
    /// `mutex` or `lease`.
    pub model: String,
    pub verdict: Verdict,
    /// Time to decide (taking returns as the history streamed, and any search at the end),
    /// plus time to narrow a violation down.
    pub elapsed_ms: f64,
    /// Operations checked.
    pub ops: u64,
    /// For a violation: the failing operation, the window around it, the longest linearizable
    /// prefix and the model state there, as printed by `lockpick check --model`.
    pub explanation: Option<String>,
    /// Why the check could not decide.
    pub unknown_reason: Option<String>,
    /// For a violation: the history time (`time_ns`) by which it is certain, the return of
    /// the operation that ends the shortest failing prefix. Absent when it could not be
    /// narrowed down, and in results written before it was recorded.
    #[serde(default)]
    pub violated_at_ns: Option<u64>,
}
