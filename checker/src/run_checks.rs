//! Every check a scenario run gets, in one call, so a run and a re-check agree.

use crate::history::Event;
use crate::lin::Budget;
use crate::lock::{check_lock_linearizability, check_locks, LockCheckParams, LockReport};
use crate::results::LinSummary;
use crate::verdict::Verdict;
use std::time::Duration;

/// The findings of every check of a run.
#[derive(Debug, Clone)]
pub struct RunChecks {
    pub lock: LockReport,
    /// `None` when no lock model fits the history (see [`check_lock_linearizability`]).
    pub linearizability: Option<LinSummary>,
}

impl RunChecks {
    /// Every check's verdict, merged.
    pub fn verdict(&self) -> Verdict {
        let lin = self
            .linearizability
            .as_ref()
            .map_or(Verdict::Valid, |l| l.verdict);
        self.lock.verdict.merge(lin)
    }
}

/// Budget of the linearizability check in a run: lock histories are easy for the search, so
/// running out means something pathological, reported as unknown rather than waited for.
fn run_budget() -> Budget {
    Budget {
        time: Some(Duration::from_secs(30)),
        memory_bytes: Some(1 << 30),
        threads: 1,
    }
}

/// Lock-safety checks and linearizability of the lock operations.
pub fn check_run(events: &[Event], params: &LockCheckParams) -> RunChecks {
    RunChecks {
        lock: check_locks(events, params),
        linearizability: check_lock_linearizability(events, params.property, &run_budget()),
    }
}
