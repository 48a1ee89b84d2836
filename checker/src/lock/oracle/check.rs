//! Test oracle (the in-memory checker the streaming one replaced): [`check_locks`]: runs every lock check over one history and decides the verdict for the
//! claimed property.

use super::super::params::{LockCheckParams, Property};
use super::super::report::{Capped, Finding, LockReport, LockStats};
use super::deadlock::deadlocks;
use super::double_holder::double_holders;
use super::holding::holdings;
use super::lost_update::{lost_updates, CounterCheck};
use super::ops::{split_ops, Ops};
use super::stale_write::{stale_writes, STALE_TOKEN};
use crate::faults::fault_windows;
use crate::history::{Event, EventKind, F};
use crate::verdict::Verdict;

/// Checks a lock history for double holders, accepted stale writes, lost counter updates and
/// deadlocks, and judges them against `params.property`.
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
    let mut violations = Findings::default();
    let mut observations = Findings::default();
    let mut unknowns = Vec::new();

    match params.property {
        Property::Exclusive => violations.add(doubles.findings),
        Property::Fenced => {
            let mut absorbed = doubles.findings;
            for f in &mut absorbed.listed {
                f.summary.push_str(" (lease expiry absorbed by the fence)");
            }
            observations.add(absorbed);
        }
    }
    violations.add(stale.accepted);
    observations.add(stale.rejected);
    match lost_updates(&ops) {
        CounterCheck::NotCounter => {}
        CounterCheck::NoFinalRead => unknowns
            .push("the counter has no final read, so lost updates cannot be counted".to_string()),
        CounterCheck::Checked(found) => violations.add(capped(found)),
    }
    if params.deadlock_ms > 0 {
        let ns = params.deadlock_ms.saturating_mul(1_000_000);
        violations.add(capped(deadlocks(&ops, &held, &faults, ns)));
    }

    let stats = stats(&ops, doubles.max_concurrent, held.list.len() as u64);
    if stats.acquires_ok == 0 {
        unknowns.push("no acquire ever succeeded, so nothing was tested".to_string());
    }
    let verdict = Verdict::merge_all([
        if violations.total() > 0 {
            Verdict::Invalid
        } else {
            Verdict::Valid
        },
        if unknowns.is_empty() {
            Verdict::Valid
        } else {
            Verdict::Unknown
        },
    ]);
    LockReport {
        property: params.property,
        verdict,
        violations: violations.listed,
        observations: observations.listed,
        omitted_violations: violations.omitted,
        omitted_observations: observations.omitted,
        unknowns,
        stats,
    }
}

/// Findings of several kinds, each kind capped on its own.
#[derive(Default)]
struct Findings {
    listed: Vec<Finding>,
    omitted: u64,
}

impl Findings {
    fn add(&mut self, c: Capped) {
        self.listed.extend(c.listed);
        self.omitted += c.omitted;
    }

    fn total(&self) -> u64 {
        self.listed.len() as u64 + self.omitted
    }
}

fn capped(findings: Vec<Finding>) -> Capped {
    let mut c = Capped::default();
    for f in findings {
        c.push_with(|| f);
    }
    c
}

fn stats(ops: &Ops<'_>, max_concurrent_holders: u64, holding_intervals: u64) -> LockStats {
    let mut s = LockStats {
        max_concurrent_holders,
        processes: ops.by_process.len() as u64,
        holding_intervals,
        ..LockStats::default()
    };
    for op in &ops.ops {
        let outcome = op.outcome();
        let counter = match (op.f, outcome) {
            (F::Acquire, Some(EventKind::Ok)) => &mut s.acquires_ok,
            (F::Acquire, Some(EventKind::Fail)) => &mut s.acquires_fail,
            (F::Acquire, _) => &mut s.acquires_info,
            (F::Release, Some(EventKind::Ok)) => &mut s.releases_ok,
            (F::Release, Some(EventKind::Fail)) => &mut s.releases_fail,
            (F::Release, _) => &mut s.releases_info,
            (F::Renew, Some(EventKind::Ok)) => &mut s.renews_ok,
            (F::Renew, Some(EventKind::Fail)) => &mut s.renews_fail,
            (F::Renew, _) => &mut s.renews_info,
            (F::Write, Some(EventKind::Ok)) => &mut s.writes_ok,
            (F::Write, Some(EventKind::Fail)) if op.error() == Some(STALE_TOKEN) => {
                &mut s.writes_rejected
            }
            (F::Write, Some(EventKind::Fail)) => &mut s.writes_fail,
            (F::Write, _) => &mut s.writes_info,
            _ => continue,
        };
        *counter += 1;
    }
    s
}
