//! Carries out a fault schedule: network faults through the proxies, pauses and crashes armed
//! on clients, peer partitions and member pauses/kills on clusters. Every fault on nodes is
//! recorded as an `invoke` before it is attempted and an `info` once it took effect (or with
//! an error if it failed), as Jepsen records its nemesis; everything broken is healed at the
//! end.

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

/// Records the invocation of fault verb `f`, carries it out, and records its completion: the
/// fault may be in force from the invoke on and is surely in force (or over, for a heal) by
/// the completion. A failure is recorded on the completion and returned.
async fn perform<Fut>(ctx: &NemesisCtx, f: F, value: Value, act: Fut) -> Result<(), NemesisError>
where
    Fut: std::future::Future<Output = Result<(), NemesisError>>,
{
    ctx.recorder.record(
        Process::Nemesis,
        EventKind::Invoke,
        f,
        None,
        value.clone(),
        None,
    );
    let done = act.await;
    let error = done.as_ref().err().map(|e| e.to_string());
    ctx.recorder
        .record(Process::Nemesis, EventKind::Info, f, None, value, error);
    done
}

fn nodes_value(nodes: &[String], note: Option<String>) -> Value {
    Value {
        nodes: nodes.to_vec(),
        note,
        ..Value::default()
    }
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
            let others: Vec<&str> = cluster
                .members()
                .iter()
                .filter(|m| !nodes.contains(m))
                .map(String::as_str)
                .collect();
            let note = leader_note("peer links cut between")
                .map(|n| format!("{n} and {}", others.join(",")));
            broken.members.insert(id, (fault, nodes.clone()));
            let value = nodes_value(&nodes, note);
            perform(ctx, F::Partition, value, async {
                Ok(cluster.isolate(&nodes).await?)
            })
            .await
        }
        MemberFault::Paused => {
            let value = nodes_value(&nodes, leader_note("SIGSTOP"));
            broken.members.insert(id, (fault, nodes.clone()));
            perform(ctx, F::Pause, value, async {
                let mut supervisor = ctx.supervisor.lock().await;
                for node in &nodes {
                    match supervisor.pause(node) {
                        Ok(()) => {}
                        // Crashed by another fault: there is no process to stop.
                        Err(DbError::NotRunning { .. }) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                Ok(())
            })
            .await
        }
        MemberFault::Crashed => {
            let value = nodes_value(&nodes, leader_note("SIGKILL"));
            broken.members.insert(id, (fault, nodes.clone()));
            perform(ctx, F::Crash, value, async {
                let mut supervisor = ctx.supervisor.lock().await;
                for node in &nodes {
                    supervisor.kill(node).await?;
                }
                Ok(())
            })
            .await
        }
    }
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
    let value = nodes_value(&nodes, None);
    match fault {
        MemberFault::Isolated => {
            perform(ctx, F::Heal, value, async {
                if let Some(cluster) = &ctx.cluster {
                    cluster.heal(&nodes).await?;
                }
                Ok(())
            })
            .await
        }
        MemberFault::Paused => {
            perform(ctx, F::Resume, value, async {
                let mut supervisor = ctx.supervisor.lock().await;
                for node in &nodes {
                    match supervisor.resume(node) {
                        // Not running: crashed by another fault meanwhile, nothing to resume.
                        Ok(()) | Err(DbError::NotRunning { .. }) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                Ok(())
            })
            .await
        }
        MemberFault::Crashed => {
            // The completion comes once the nodes answer again, so the window covers the
            // whole restart.
            perform(ctx, F::Restart, value, async {
                let mut supervisor = ctx.supervisor.lock().await;
                supervisor.restart_all(&nodes).await?;
                Ok(())
            })
            .await
        }
    }
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
            let value = Value {
                nodes: nodes.clone(),
                ms: Some(*latency_ms),
                jitter_ms: Some(*jitter_ms),
                ..Value::default()
            };
            perform(ctx, F::Slow, value, async {
                for node in nodes {
                    broken.links.insert(node.clone());
                    ctx.proxies.slow(node, *latency_ms, *jitter_ms).await?;
                }
                Ok(())
            })
            .await?;
        }
        Action::Partition { nodes } => {
            perform(ctx, F::Partition, nodes_value(nodes, None), async {
                for node in nodes {
                    broken.links.insert(node.clone());
                    ctx.proxies.partition(node).await?;
                }
                Ok(())
            })
            .await?;
        }
        Action::Heal { nodes } => {
            perform(ctx, F::Heal, nodes_value(nodes, None), async {
                for node in nodes {
                    ctx.proxies.heal(node).await?;
                    broken.links.remove(node);
                }
                Ok(())
            })
            .await?;
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
            let value = Value {
                nodes: nodes.clone(),
                offset_ms: Some(*offset_ms),
                note: Some(format!("libfaketime {}", setting.spec())),
                ..Value::default()
            };
            perform(ctx, F::Clock, value, async {
                broken.clocks.extend(nodes.iter().cloned());
                set_clocks(ctx, nodes, setting).await
            })
            .await?;
        }
        Action::ResetClock { nodes } => {
            perform(ctx, F::ClockReset, nodes_value(nodes, None), async {
                set_clocks(ctx, nodes, ClockSetting::REAL).await?;
                for node in nodes {
                    broken.clocks.remove(node);
                }
                Ok(())
            })
            .await?;
        }
    }
    Ok(())
}
