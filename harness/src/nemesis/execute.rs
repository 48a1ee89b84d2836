//! Carries out a fault schedule: network faults through the proxies, pauses and crashes armed
//! on clients, peer partitions and member pauses/kills on clusters. Every fault that takes
//! effect is recorded; everything broken is healed at the end.

use super::error::NemesisError;
use super::schedule::{Action, Members, Step};
use crate::client::{Interrupt, PausePlan, PausePoints};
use crate::cluster::ClusterNet;
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
    Killed,
}

/// What the nemesis has broken and must repair.
#[derive(Default)]
struct Broken {
    /// Nodes with proxy faults (latency, partition).
    nodes: BTreeSet<String>,
    /// Member faults by id: what was done and to whom.
    members: BTreeMap<usize, (MemberFault, Vec<String>)>,
}

/// Runs `steps` until they are done or `ctx.stop` is cancelled, then heals every node it broke.
/// Returns the first proxy error; the heal at the end is attempted regardless.
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
            MemberFault::Paused => Action::ResumeMembers { id },
            MemberFault::Killed => Action::RestartMembers { id },
        };
        if let Err(e) = apply(&ctx, &undo, &mut broken).await {
            first_error.get_or_insert(e);
        }
    }
    if !broken.nodes.is_empty() {
        let nodes: Vec<String> = std::mem::take(&mut broken.nodes).into_iter().collect();
        if let Err(e) = apply(&ctx, &Action::Heal { nodes }, &mut broken).await {
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

/// Starts a member fault: isolate, pause or kill `members`.
async fn start_member_fault(
    ctx: &NemesisCtx,
    fault: MemberFault,
    members: &Members,
    id: usize,
    broken: &mut Broken,
) -> Result<(), NemesisError> {
    let Some(cluster) = ctx.cluster.as_ref() else {
        return Err(NemesisError::NotACluster {
            fault: match fault {
                MemberFault::Isolated => "isolate",
                MemberFault::Paused => "member-pause",
                MemberFault::Killed => "member-kill",
            },
        });
    };
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
                supervisor.pause(node)?;
            }
            broken.members.insert(id, (fault, nodes.clone()));
            record_members(ctx, F::Pause, &nodes, leader_note("SIGSTOP"));
        }
        MemberFault::Killed => {
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

/// Ends the member fault `id`, if it started.
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
                supervisor.resume(node)?;
            }
            record_members(ctx, F::Resume, &nodes, None);
        }
        MemberFault::Killed => {
            let mut supervisor = ctx.supervisor.lock().await;
            for node in &nodes {
                supervisor.restart(node).await?;
            }
            record_members(ctx, F::Restart, &nodes, None);
        }
    }
    Ok(())
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
                broken.nodes.insert(node.clone());
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
                broken.nodes.insert(node.clone());
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
                broken.nodes.remove(node);
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
        Action::PauseMembers { members, id } => {
            start_member_fault(ctx, MemberFault::Paused, members, *id, broken).await?
        }
        Action::KillMembers { members, id } => {
            start_member_fault(ctx, MemberFault::Killed, members, *id, broken).await?
        }
        Action::Rejoin { id } | Action::ResumeMembers { id } | Action::RestartMembers { id } => {
            end_member_fault(ctx, *id, broken).await?
        }
    }
    Ok(())
}
