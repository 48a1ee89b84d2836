//! Carries out a fault schedule, step by step, each as its fault's module defines it. Every
//! fault on nodes is recorded as an `invoke` before it is attempted and an `info` once it took
//! effect (or with an error if it failed), as Jepsen records its nemesis; every fault still in
//! force is healed at the end.

use crate::fault::{NemesisCtx, NemesisError, OpenFaults, Step};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Runs `steps` until they are done or `ctx.stop` is cancelled, then heals every fault still
/// in force, in the order they started (peer links restored, paused nodes resumed, crashed
/// nodes restarted, links healed, clocks reset). Returns the first error; the heals at the end
/// are attempted regardless.
pub async fn run_nemesis(steps: Vec<Step>, ctx: NemesisCtx) -> Result<(), NemesisError> {
    let mut open = OpenFaults::default();
    let mut first_error = None;
    // How late each member fault started: steps run one after another, so a slow step (a
    // restart waits until its nodes answer) delays the next; the end of a fault that started
    // late is delayed as much, so the fault lasts as long as the scenario says.
    let mut late: BTreeMap<usize, Duration> = BTreeMap::new();
    for step in steps {
        let scheduled = ctx.start + Duration::from_millis(step.at_ms);
        let due = scheduled
            + step
                .action
                .closes()
                .and_then(|id| late.get(&id).copied())
                .unwrap_or_default();
        tokio::select! {
            _ = ctx.stop.cancelled() => break,
            _ = tokio::time::sleep_until(due.into()) => {}
        }
        if let Some(id) = step.action.opens() {
            late.insert(id, Instant::now().saturating_duration_since(scheduled));
        }
        if let Err(e) = step.action.apply(&ctx, &mut open).await {
            first_error.get_or_insert(e);
            break;
        }
    }
    // Armed pauses and crashes stay armed until the workload ends: the last one is usually
    // taken after the schedule ran out.
    ctx.stop.cancelled().await;
    for points in &ctx.points {
        points.disarm();
    }
    for heal in open.take_all() {
        if let Err(e) = heal.heal(&ctx).await {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}
