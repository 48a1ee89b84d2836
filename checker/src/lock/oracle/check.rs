//! Test oracle (the in-memory checker the streaming one replaced): [`check_locks`]: runs every lock check over one history and decides the verdict for the
//! claimed property.

use super::super::params::LockCheckParams;
use super::super::report::{judge, Capped, Found, LockReport, LockStats};
use super::deadlock::{deadlocks, timelines};
use super::double_holder::double_holders;
use super::holding::holdings;
use super::lockout::lockouts;
use super::lost_update::{lost_updates, CounterCheck};
use super::ops::split_ops;
use super::stale_write::stale_writes;
use crate::faults::fault_windows;
use crate::history::Event;

/// Checks a lock history for double holders, accepted stale writes, lost counter updates,
/// deadlocks and lockouts, and judges them against `params.property`.
///
/// Preconditions: `events` are in history order (as read by
/// [`read_history`](crate::history::read_history)); the counter, when there is one, starts at 0.
/// The verdict is unknown when no acquire ever succeeded or a counter history has no final read.
pub(crate) fn check_locks_in_memory(events: &[Event], params: &LockCheckParams) -> LockReport {
    let faults = fault_windows(events);
    let ops = split_ops(events);
    let held = holdings(&ops);

    let doubles = double_holders(&ops, &held, &faults);
    let stale = stale_writes(&ops, &held, &faults);
    let mut unknowns = Vec::new();
    let mut others = vec![stale.rejected];
    match lost_updates(&ops) {
        CounterCheck::NotCounter => {}
        CounterCheck::NoFinalRead => unknowns
            .push("the counter has no final read, so lost updates cannot be counted".to_string()),
        CounterCheck::Checked(found) => others.push(Capped::of(found)),
    }
    if params.deadlock_ms > 0 {
        let ns = params.deadlock_ms.saturating_mul(1_000_000);
        let mut timelines = timelines(&ops);
        others.push(Capped::of(deadlocks(&held, &mut timelines, &faults, ns)));
        others.push(Capped::of(lockouts(&held, &timelines, &faults, ns)));
    }
    let mut stats = LockStats {
        max_concurrent_holders: doubles.max_concurrent,
        processes: ops.by_process.len() as u64,
        holding_intervals: held.list.len() as u64,
        ..LockStats::default()
    };
    for op in &ops.ops {
        stats.count(op.f, op.outcome(), op.error());
    }
    let found = Found {
        doubles: doubles.findings,
        accepted: stale.accepted,
        others,
        unknowns,
        stats,
        // Per-lock counts are the streaming checker's; the comparison checks them against
        // this report's findings grouped by lock.
        per_lock: Vec::new(),
        // Notices are information the streaming checker sets beside the losses; the oracle
        // is about findings.
        learned: Vec::new(),
        // The server's record is set beside the streaming checker's holdings only.
        server: None,
    };
    judge(params.property, found)
}
