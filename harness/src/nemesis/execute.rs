//! Carries out a fault schedule: network faults through the proxies, pauses and crashes armed
//! on clients. Every fault that takes effect is recorded; everything broken is healed at the end.

use super::error::NemesisError;
use super::schedule::{Action, Step};
use crate::client::{Interrupt, PausePlan, PausePoints};
use crate::db::faketime::{control_file, set_clock, ClockSetting};
use crate::db::DbError;
use crate::proxy::FaultProxies;
use crate::recorder::Recorder;
use lockpick_checker::history::{EventKind, Process, Value, F};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// What the nemesis acts on.
pub struct NemesisCtx {
    pub proxies: FaultProxies,
    pub recorder: Arc<Recorder>,
    /// One per logical client, by index.
    pub points: Vec<Arc<PausePoints>>,
    /// Time 0 of the schedule.
    pub start: Instant,
    /// Cancelled when the workload ends: no new fault starts.
    pub stop: CancellationToken,
    /// The run's nodes, for faults on server processes.
    pub supervisor: Arc<tokio::sync::Mutex<crate::db::Supervisor>>,
}

/// Nodes the nemesis left broken, to be healed at the end.
#[derive(Default)]
struct Broken {
    /// Network faults (partition, slow).
    links: BTreeSet<String>,
    /// Paused processes.
    paused: BTreeSet<String>,
    /// Crashed processes not yet restarted.
    crashed: BTreeSet<String>,
    /// Clocks moved from real time.
    clocks: BTreeSet<String>,
}

/// Runs `steps` until they are done or `ctx.stop` is cancelled, then heals every node it broke
/// (links healed, paused nodes resumed, crashed nodes restarted). Returns the first error; the
/// heal at the end is attempted regardless.
pub async fn run_nemesis(steps: Vec<Step>, ctx: NemesisCtx) -> Result<(), NemesisError> {
    let mut broken = Broken::default();
    let mut first_error = None;
    for step in steps {
        let due = ctx.start + Duration::from_millis(step.at_ms);
        tokio::select! {
            _ = ctx.stop.cancelled() => break,
            _ = tokio::time::sleep_until(due.into()) => {}
        }
        if let Err(e) = apply(&ctx, &step.action, &mut broken).await {
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
    let to_vec = |set: &mut BTreeSet<String>| std::mem::take(set).into_iter().collect();
    let heals = [
        Action::ResumeNodes {
            nodes: to_vec(&mut broken.paused),
        },
        Action::RestartNodes {
            nodes: to_vec(&mut broken.crashed),
        },
        Action::Heal {
            nodes: to_vec(&mut broken.links),
        },
        Action::ResetClock {
            nodes: to_vec(&mut broken.clocks),
        },
    ];
    for action in heals {
        if action.nodes().is_empty() {
            continue;
        }
        if let Err(e) = apply(&ctx, &action, &mut broken).await {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}

fn record(ctx: &NemesisCtx, f: F, value: Value) {
    ctx.recorder
        .record(Process::Nemesis, EventKind::Info, f, None, value, None);
}

/// Writes `setting` to the libfaketime control file of each node.
async fn set_clocks(
    ctx: &NemesisCtx,
    nodes: &[String],
    setting: ClockSetting,
) -> Result<(), NemesisError> {
    let sup = ctx.supervisor.lock().await;
    for node in nodes {
        let info = sup
            .node(node)
            .ok_or_else(|| NemesisError::UnknownNode { node: node.clone() })?;
        let path = control_file(&info.dir);
        set_clock(&path, setting).map_err(|source| NemesisError::Clock {
            node: node.clone(),
            path,
            source,
        })?;
    }
    Ok(())
}

fn record_nodes(ctx: &NemesisCtx, f: F, nodes: &[String]) {
    record(
        ctx,
        f,
        Value {
            nodes: nodes.to_vec(),
            ..Value::default()
        },
    );
}

async fn apply(ctx: &NemesisCtx, action: &Action, broken: &mut Broken) -> Result<(), NemesisError> {
    match action {
        Action::PauseClient { client, point, ms } => {
            ctx.points[*client].arm(PausePlan {
                point: *point,
                interrupt: Interrupt::Pause { ms: *ms },
            });
        }
        Action::CrashClient { client, point } => {
            ctx.points[*client].arm(PausePlan {
                point: *point,
                interrupt: Interrupt::Crash,
            });
        }
        Action::Slow {
            nodes,
            latency_ms,
            jitter_ms,
        } => {
            for node in nodes {
                ctx.proxies.slow(node, *latency_ms, *jitter_ms).await?;
                broken.links.insert(node.clone());
            }
            record(
                ctx,
                F::Slow,
                Value {
                    nodes: nodes.clone(),
                    ms: Some(*latency_ms),
                    jitter_ms: Some(*jitter_ms),
                    ..Value::default()
                },
            );
        }
        Action::Partition { nodes } => {
            for node in nodes {
                ctx.proxies.partition(node).await?;
                broken.links.insert(node.clone());
            }
            record(
                ctx,
                F::Partition,
                Value {
                    nodes: nodes.clone(),
                    ..Value::default()
                },
            );
        }
        Action::Heal { nodes } => {
            for node in nodes {
                ctx.proxies.heal(node).await?;
                broken.links.remove(node);
            }
            record(
                ctx,
                F::Heal,
                Value {
                    nodes: nodes.clone(),
                    ..Value::default()
                },
            );
        }
        Action::PauseNodes { nodes } => {
            let mut sup = ctx.supervisor.lock().await;
            for node in nodes {
                match sup.pause(node) {
                    Ok(()) => {
                        broken.paused.insert(node.clone());
                    }
                    // Crashed by another fault: there is no process to stop.
                    Err(DbError::NotRunning { .. }) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            record_nodes(ctx, F::Pause, nodes);
        }
        Action::ResumeNodes { nodes } => {
            let mut sup = ctx.supervisor.lock().await;
            for node in nodes {
                match sup.resume(node) {
                    Ok(()) | Err(DbError::NotRunning { .. }) => {}
                    Err(e) => return Err(e.into()),
                }
                broken.paused.remove(node);
            }
            record_nodes(ctx, F::Resume, nodes);
        }
        Action::CrashNodes { nodes } => {
            let mut sup = ctx.supervisor.lock().await;
            for node in nodes {
                sup.kill(node).await?;
                broken.paused.remove(node);
                broken.crashed.insert(node.clone());
            }
            record_nodes(ctx, F::Crash, nodes);
        }
        Action::RestartNodes { nodes } => {
            let mut sup = ctx.supervisor.lock().await;
            for node in nodes {
                sup.restart(node).await?;
                broken.crashed.remove(node);
            }
            record_nodes(ctx, F::Restart, nodes);
        }
        Action::SetClock {
            nodes,
            offset_ms,
            rate_milli,
        } => {
            let setting = ClockSetting {
                offset_ms: *offset_ms,
                rate_milli: *rate_milli,
            };
            set_clocks(ctx, nodes, setting).await?;
            broken.clocks.extend(nodes.iter().cloned());
            record(
                ctx,
                F::Clock,
                Value {
                    nodes: nodes.clone(),
                    offset_ms: Some(*offset_ms),
                    note: Some(format!("libfaketime {}", setting.spec())),
                    ..Value::default()
                },
            );
        }
        Action::ResetClock { nodes } => {
            set_clocks(ctx, nodes, ClockSetting::REAL).await?;
            for node in nodes {
                broken.clocks.remove(node);
            }
            record_nodes(ctx, F::ClockReset, nodes);
        }
    }
    Ok(())
}
