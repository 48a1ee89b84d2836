//! Carries out a fault schedule: network faults through the proxies, pauses and crashes armed
//! on clients, peer partitions and member pauses/kills on clusters. Every fault that takes
//! effect is recorded; everything broken is healed at the end.

use super::error::NemesisError;
use super::schedule::{Action, Members, Step};
use crate::client::{Interrupt, PausePlan, PausePoints};
use crate::cluster::ClusterNet;
use crate::db::faketime::{control_file, set_clock, ClockSetting};
use crate::db::DbError;
use crate::proxy::FaultProxies;
use crate::recorder::Recorder;
use lockpick_checker::history::{EventKind, Process, Value, F};
use std::collections::{BTreeMap, BTreeSet};
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
    /// The peer network, when the backend is a cluster.
    pub cluster: Option<Arc<ClusterNet>>,
}

/// How long to look for a leader before a leader fault is skipped (an election is running).
const LEADER_SEARCH: Duration = Duration::from_secs(3);

/// A member fault in force, by the id that pairs its start and end actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MemberFault {
    Isolated,
    Paused,
    Crashed,
}

/// What the nemesis has broken and must repair.
#[derive(Default)]
struct Broken {
    /// Nodes with network faults (partition, slow).
    links: BTreeSet<String>,
    /// Peer isolations, paused and crashed nodes by fault id: what was done and to whom.
    members: BTreeMap<usize, (MemberFault, Vec<String>)>,
    /// Clocks moved from real time.
    clocks: BTreeSet<String>,
}

/// Runs `steps` until they are done or `ctx.stop` is cancelled, then heals every node it broke
/// (peer links restored, paused nodes resumed, crashed nodes restarted, links healed, clocks
/// reset). Returns the first error; the heal at the end is attempted regardless.
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
    let ids: Vec<(usize, MemberFault)> = broken
        .members
        .iter()
        .map(|(id, (fault, _))| (*id, *fault))
        .collect();
    for (id, fault) in ids {
        let undo = match fault {
            MemberFault::Isolated => Action::Rejoin { id },
            MemberFault::Paused => Action::ResumeNodes { id },
            MemberFault::Crashed => Action::RestartNodes { id },
        };
        if let Err(e) = apply(&ctx, &undo, &mut broken).await {
            first_error.get_or_insert(e);
        }
    }
    let to_vec = |set: &mut BTreeSet<String>| std::mem::take(set).into_iter().collect::<Vec<_>>();
    let heals = [
        Action::Heal {
            nodes: to_vec(&mut broken.links),
        },
        Action::ResetClock {
            nodes: to_vec(&mut broken.clocks),
        },
    ];
    for action in heals {
        if let Action::Heal { nodes } | Action::ResetClock { nodes } = &action {
            if nodes.is_empty() {
                continue;
            }
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

/// The members `members` names now: the leader is looked up (a paused or dead member is
/// never it); `None` when no leader emerged in time.
async fn resolve(ctx: &NemesisCtx, members: &Members) -> Option<Vec<String>> {
    match members {
        Members::Named(names) => Some(names.clone()),
        Members::Leader => {
            let names = ctx.cluster.as_ref()?.members().to_vec();
            let deadline = Instant::now() + LEADER_SEARCH;
            loop {
                if let Some(leader) = ctx.supervisor.lock().await.leader(&names).await {
                    return Some(vec![leader]);
                }
                if Instant::now() >= deadline {
                    return None;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

fn record_members(ctx: &NemesisCtx, f: F, nodes: &[String], note: Option<String>) {
    record(
        ctx,
        f,
        Value {
            nodes: nodes.to_vec(),
            note,
            ..Value::default()
        },
    );
}

/// Starts a fault on nodes: isolate (clusters only), pause or crash `members`.
async fn start_member_fault(
    ctx: &NemesisCtx,
    fault: MemberFault,
    members: &Members,
    id: usize,
    broken: &mut Broken,
) -> Result<(), NemesisError> {
    // No leader emerged: the fault did not take effect, so nothing is recorded.
    let Some(nodes) = resolve(ctx, members).await else {
        return Ok(());
    };
    let leader_note = |what: &str| {
        let who = if *members == Members::Leader {
            "the leader "
        } else {
            ""
        };
        Some(format!("{what} {who}{}", nodes.join(",")))
    };
    match fault {
        MemberFault::Isolated => {
            let Some(cluster) = ctx.cluster.as_ref() else {
                return Err(NemesisError::NotACluster { fault: "isolate" });
            };
            broken.members.insert(id, (fault, nodes.clone()));
            cluster.isolate(&nodes).await?;
            let others: Vec<&str> = cluster
                .members()
                .iter()
                .filter(|m| !nodes.contains(m))
                .map(String::as_str)
                .collect();
            let note = leader_note("peer links cut between")
                .map(|n| format!("{n} and {}", others.join(",")));
            record_members(ctx, F::Partition, &nodes, note);
        }
        MemberFault::Paused => {
            let mut supervisor = ctx.supervisor.lock().await;
            for node in &nodes {
                match supervisor.pause(node) {
                    Ok(()) => {}
                    // Crashed by another fault: there is no process to stop.
                    Err(DbError::NotRunning { .. }) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            broken.members.insert(id, (fault, nodes.clone()));
            record_members(ctx, F::Pause, &nodes, leader_note("SIGSTOP"));
        }
        MemberFault::Crashed => {
            let mut supervisor = ctx.supervisor.lock().await;
            broken.members.insert(id, (fault, nodes.clone()));
            for node in &nodes {
                supervisor.kill(node).await?;
            }
            record_members(ctx, F::Crash, &nodes, leader_note("SIGKILL"));
        }
    }
    Ok(())
}

/// Ends the fault `id` on nodes, if it started.
async fn end_member_fault(
    ctx: &NemesisCtx,
    id: usize,
    broken: &mut Broken,
) -> Result<(), NemesisError> {
    let Some((fault, nodes)) = broken.members.remove(&id) else {
        return Ok(());
    };
    match fault {
        MemberFault::Isolated => {
            if let Some(cluster) = &ctx.cluster {
                cluster.heal(&nodes).await?;
            }
            record_members(ctx, F::Heal, &nodes, None);
        }
        MemberFault::Paused => {
            let mut supervisor = ctx.supervisor.lock().await;
            for node in &nodes {
                match supervisor.resume(node) {
                    // Not running: crashed by another fault meanwhile, nothing to resume.
                    Ok(()) | Err(DbError::NotRunning { .. }) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            record_members(ctx, F::Resume, &nodes, None);
        }
        MemberFault::Crashed => {
            let mut supervisor = ctx.supervisor.lock().await;
            for node in &nodes {
                supervisor.restart(node).await?;
            }
            record_members(ctx, F::Restart, &nodes, None);
        }
    }
    Ok(())
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
        Action::Isolate { members, id } => {
            start_member_fault(ctx, MemberFault::Isolated, members, *id, broken).await?
        }
        Action::PauseNodes { members, id } => {
            start_member_fault(ctx, MemberFault::Paused, members, *id, broken).await?
        }
        Action::CrashNodes { members, id } => {
            start_member_fault(ctx, MemberFault::Crashed, members, *id, broken).await?
        }
        Action::Rejoin { id } | Action::ResumeNodes { id } | Action::RestartNodes { id } => {
            end_member_fault(ctx, *id, broken).await?
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
