//! Turns a scenario's fault list into a timed list of actions. Pure: the same scenario and seed
//! always give the same schedule.

use crate::scenario::rules::MAX_SCHEDULE_STEPS;
use crate::scenario::{Fault, FaultKind, PausePoint, Scenario, Targets};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

/// One thing the nemesis does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Arm a pause on a client, taken when it reaches `point`.
    PauseClient {
        client: usize,
        point: PausePoint,
        ms: u64,
    },
    /// Arm a crash on a client, taken when it reaches `point`.
    CrashClient { client: usize, point: PausePoint },
    /// Add latency to the links of `nodes`.
    Slow {
        nodes: Vec<String>,
        latency_ms: u64,
        jitter_ms: u64,
    },
    /// Cut the links of `nodes`.
    Partition { nodes: Vec<String> },
    /// Remove the network faults of `nodes`.
    Heal { nodes: Vec<String> },
    /// Cut the peer links between `members` and the other members; `id` pairs it with its
    /// [`Action::Rejoin`].
    Isolate { members: Members, id: usize },
    /// Restore the peer links cut by the isolation `id`.
    Rejoin { id: usize },
    /// Stop the processes of `members` (SIGSTOP); `id` pairs it with its
    /// [`Action::ResumeNodes`].
    PauseNodes { members: Members, id: usize },
    /// Let the nodes paused by `id` go on (SIGCONT).
    ResumeNodes { id: usize },
    /// Kill the processes of `members` (SIGKILL); `id` pairs it with its
    /// [`Action::RestartNodes`].
    CrashNodes { members: Members, id: usize },
    /// Start the nodes crashed by `id` again, with whatever their persistence kept.
    RestartNodes { id: usize },
    /// Set the wall clock of `nodes`: `offset_ms` from real time, running at
    /// `rate_milli / 1000` times real speed if set.
    SetClock {
        nodes: Vec<String>,
        offset_ms: i64,
        rate_milli: Option<u64>,
    },
    /// Put the clocks of `nodes` back to real time.
    ResetClock { nodes: Vec<String> },
}

impl Action {
    /// The id of the member fault this action starts, if it starts one.
    pub fn opens(&self) -> Option<usize> {
        match self {
            Action::Isolate { id, .. }
            | Action::PauseNodes { id, .. }
            | Action::CrashNodes { id, .. } => Some(*id),
            _ => None,
        }
    }

    /// The id of the member fault this action ends, if it ends one.
    pub fn closes(&self) -> Option<usize> {
        match self {
            Action::Rejoin { id } | Action::ResumeNodes { id } | Action::RestartNodes { id } => {
                Some(*id)
            }
            _ => None,
        }
    }
}

/// The nodes a process or peer fault applies to: named in the schedule, or the cluster's
/// leader, found when the fault starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Members {
    Named(Vec<String>),
    Leader,
}

/// An action at a time, in milliseconds from the start of the workload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Step {
    pub at_ms: u64,
    pub action: Action,
}

/// Draws the schedule for `scenario` with `seed`, covering `duration_ms` of workload. Steps are
/// sorted by time; a heal is scheduled even past the end so nothing stays broken.
pub fn build_schedule(
    scenario: &Scenario,
    seed: u64,
    duration_ms: u64,
    clients: usize,
) -> Vec<Step> {
    // A stream apart from the clients' so changing the workload does not move the faults.
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6E65_6D65_7369_7321);
    let nodes = scenario.node_names();
    let mut steps = Vec::new();
    for fault in &scenario.nemesis.faults {
        let mut at = fault.at_ms.draw(&mut rng);
        let max_runs = match (fault.count, fault.every_ms) {
            (Some(n), _) => n as u64,
            (None, Some(_)) => u64::MAX,
            (None, None) => 1,
        };
        let mut runs = 0;
        while at < duration_ms && runs < max_runs {
            let pick_client = |rng: &mut ChaCha8Rng, fixed: Option<usize>| {
                fixed.unwrap_or_else(|| rng.random_range(0..clients))
            };
            let pick_members = |rng: &mut ChaCha8Rng, targets: &Targets| match targets {
                Targets::All => Members::Named(nodes.clone()),
                Targets::RandomOne => {
                    Members::Named(vec![nodes[rng.random_range(0..nodes.len())].clone()])
                }
                Targets::Nodes(n) => Members::Named(n.clone()),
                Targets::Leader => Members::Leader,
            };
            let pick_nodes =
                |rng: &mut ChaCha8Rng, targets: &Targets| match pick_members(rng, targets) {
                    Members::Named(n) => n,
                    // Rejected by the scenario parser for proxy faults.
                    Members::Leader => nodes.clone(),
                };
            let id = steps.len();
            match &fault.kind {
                FaultKind::ClientPause {
                    point,
                    duration,
                    client,
                } => {
                    let client = pick_client(&mut rng, *client);
                    let ms = duration.draw(&mut rng);
                    steps.push(Step {
                        at_ms: at,
                        action: Action::PauseClient {
                            client,
                            point: *point,
                            ms,
                        },
                    });
                }
                FaultKind::ClientCrash { point, client } => {
                    let client = pick_client(&mut rng, *client);
                    steps.push(Step {
                        at_ms: at,
                        action: Action::CrashClient {
                            client,
                            point: *point,
                        },
                    });
                }
                FaultKind::Latency {
                    targets,
                    latency_ms,
                    jitter_ms,
                    duration,
                } => {
                    let nodes = pick_nodes(&mut rng, targets);
                    let ms = duration.draw(&mut rng);
                    push_window(
                        &mut steps,
                        at,
                        ms,
                        Action::Slow {
                            nodes: nodes.clone(),
                            latency_ms: *latency_ms,
                            jitter_ms: *jitter_ms,
                        },
                        Action::Heal { nodes },
                    );
                }
                FaultKind::Isolate { targets, duration }
                | FaultKind::NodePause { targets, duration }
                | FaultKind::NodeCrash { targets, duration } => {
                    let members = pick_members(&mut rng, targets);
                    let ms = duration.draw(&mut rng);
                    let (start, end) = match &fault.kind {
                        FaultKind::Isolate { .. } => {
                            (Action::Isolate { members, id }, Action::Rejoin { id })
                        }
                        FaultKind::NodePause { .. } => (
                            Action::PauseNodes { members, id },
                            Action::ResumeNodes { id },
                        ),
                        _ => (
                            Action::CrashNodes { members, id },
                            Action::RestartNodes { id },
                        ),
                    };
                    push_window(&mut steps, at, ms, start, end);
                }
                FaultKind::Partition { targets, duration } => {
                    let nodes = pick_nodes(&mut rng, targets);
                    let ms = duration.draw(&mut rng);
                    push_window(
                        &mut steps,
                        at,
                        ms,
                        Action::Partition {
                            nodes: nodes.clone(),
                        },
                        Action::Heal { nodes },
                    );
                }
                FaultKind::ClockJump {
                    targets, duration, ..
                }
                | FaultKind::ClockRate {
                    targets, duration, ..
                } => {
                    let nodes = pick_nodes(&mut rng, targets);
                    let ms = duration.draw(&mut rng);
                    let (offset_ms, rate_milli) = match &fault.kind {
                        FaultKind::ClockJump { offset_ms, .. } => (*offset_ms, None),
                        FaultKind::ClockRate { rate_milli, .. } => (0, Some(*rate_milli)),
                        _ => unreachable!("matched above"),
                    };
                    push_window(
                        &mut steps,
                        at,
                        ms,
                        Action::SetClock {
                            nodes: nodes.clone(),
                            offset_ms,
                            rate_milli,
                        },
                        Action::ResetClock { nodes },
                    );
                }
                FaultKind::ClockStrobe {
                    targets,
                    offset_ms,
                    period_ms,
                    duration,
                } => {
                    let nodes = pick_nodes(&mut rng, targets);
                    let ms = duration.draw(&mut rng);
                    let mut t = 0;
                    let mut flipped = true;
                    // Flips after the workload's end would never run (the nemesis stops
                    // there and resets every clock it moved).
                    while t < ms && at + t < duration_ms {
                        steps.push(Step {
                            at_ms: at + t,
                            action: Action::SetClock {
                                nodes: nodes.clone(),
                                offset_ms: if flipped { *offset_ms } else { 0 },
                                rate_milli: None,
                            },
                        });
                        flipped = !flipped;
                        t += period_ms;
                    }
                    steps.push(Step {
                        at_ms: at + ms,
                        action: Action::ResetClock { nodes },
                    });
                }
            }
            runs += 1;
            match fault.every_ms {
                Some(every) => at += every.draw(&mut rng).max(1),
                None => break,
            }
        }
    }
    // Stable: actions at the same time keep the order of the scenario file.
    steps.sort_by_key(|s| s.at_ms);
    steps
}

/// An upper bound on the steps `fault` adds to a schedule of `duration_ms`, whatever the seed
/// draws: starts before the end, times the steps of one start. Saturates instead of
/// overflowing.
pub fn max_steps(fault: &Fault, duration_ms: u64) -> u64 {
    if fault.at_ms.min >= duration_ms {
        return 0;
    }
    let starts = match (fault.every_ms, fault.count) {
        (None, _) => 1,
        (Some(every), count) => {
            let fit = (duration_ms - fault.at_ms.min - 1) / every.min.max(1) + 1;
            count.map_or(fit, |c| fit.min(u64::from(c)))
        }
    };
    let per_start = match &fault.kind {
        FaultKind::ClientPause { .. } | FaultKind::ClientCrash { .. } => 1,
        FaultKind::Latency { .. }
        | FaultKind::Partition { .. }
        | FaultKind::Isolate { .. }
        | FaultKind::NodePause { .. }
        | FaultKind::NodeCrash { .. }
        | FaultKind::ClockJump { .. }
        | FaultKind::ClockRate { .. } => 2,
        FaultKind::ClockStrobe {
            period_ms,
            duration,
            ..
        } => duration.max.min(duration_ms).div_ceil((*period_ms).max(1)) + 1,
    };
    starts.saturating_mul(per_start)
}

/// Checks that the schedule of `scenario` over `duration_ms` stays within
/// [`MAX_SCHEDULE_STEPS`]. `Err` names the fault (its index) that takes the most steps, the
/// field to change, and why.
pub fn check_schedule_size(
    scenario: &Scenario,
    duration_ms: u64,
) -> Result<(), (usize, &'static str, String)> {
    let per_fault: Vec<u64> = scenario
        .nemesis
        .faults
        .iter()
        .map(|f| max_steps(f, duration_ms))
        .collect();
    let total = per_fault.iter().fold(0u64, |a, &b| a.saturating_add(b));
    if total <= MAX_SCHEDULE_STEPS {
        return Ok(());
    }
    let (index, steps) = per_fault
        .iter()
        .copied()
        .enumerate()
        .max_by_key(|&(_, n)| n)
        .expect("a schedule over the limit has a fault");
    let fault = &scenario.nemesis.faults[index];
    let field = match fault.kind {
        FaultKind::ClockStrobe { .. } if fault.every_ms.is_none() => "nemesis.period_ms",
        _ => "nemesis.every_ms",
    };
    Err((
        index,
        field,
        format!(
            "fault {} (line {}) can take {steps} schedule steps over a {duration_ms} ms run, {total} in all; allowed: at most {MAX_SCHEDULE_STEPS}: make it recur less often, set count, or shorten the run",
            fault.kind.name(),
            fault.line
        ),
    ))
}

/// Pushes `start` at `at` and `end` `ms` later: the two ends of a fault that lasts.
fn push_window(steps: &mut Vec<Step>, at: u64, ms: u64, start: Action, end: Action) {
    steps.push(Step {
        at_ms: at,
        action: start,
    });
    steps.push(Step {
        at_ms: at + ms,
        action: end,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse_scenario;
    use std::path::Path;

    fn scenario(faults: &str) -> Scenario {
        let text = format!(
            "name = \"t\"\n[backend]\nkind = \"redis\"\n[workload]\nkind = \"fenced-write\"\nclients = 4\nduration_ms = 10000\n{faults}"
        );
        parse_scenario(Path::new("t.toml"), &text).unwrap()
    }

    #[test]
    fn every_member_fault_is_opened_before_it_is_closed_and_closed_once() {
        let s = scenario(
            "[[nemesis]]\nfault = \"node-crash\"\nnodes = [\"n1\"]\nat_ms = [0, 500]\nevery_ms = [700, 1200]\nduration_ms = [0, 600]\n[[nemesis]]\nfault = \"node-pause\"\nnodes = [\"n1\"]\nat_ms = 300\nevery_ms = 900\nduration_ms = 200\n",
        );
        for seed in 0..20 {
            let steps = build_schedule(&s, seed, 10_000, 4);
            let mut open = std::collections::BTreeSet::new();
            let mut closed = 0;
            for step in &steps {
                if let Some(id) = step.action.opens() {
                    assert!(open.insert(id), "seed {seed}: {id} opened twice");
                }
                if let Some(id) = step.action.closes() {
                    assert!(open.remove(&id), "seed {seed}: {id} closed before opened");
                    closed += 1;
                }
            }
            assert!(open.is_empty(), "seed {seed}: never closed: {open:?}");
            assert!(closed >= 8, "seed {seed}: {closed} member faults");
        }
    }

    #[test]
    fn same_seed_same_schedule_other_seed_other_schedule() {
        let s = scenario(
            "[[nemesis]]\nfault = \"client-pause\"\nat_ms = [0, 1000]\nevery_ms = [500, 1500]\nduration_ms = [100, 900]\n",
        );
        let a = build_schedule(&s, 1, 10_000, 4);
        assert_eq!(a, build_schedule(&s, 1, 10_000, 4));
        assert_ne!(a, build_schedule(&s, 2, 10_000, 4));
        assert!(
            a.len() >= 6,
            "recurring every ≤1.5 s over 10 s: {}",
            a.len()
        );
        assert!(a.windows(2).all(|w| w[0].at_ms <= w[1].at_ms));
        assert!(a.iter().all(|s| s.at_ms < 10_000));
    }

    #[test]
    fn network_faults_are_healed_after_their_duration() {
        let s = scenario(
            "[[nemesis]]\nfault = \"partition\"\nat_ms = 9000\nduration_ms = 2000\nnodes = [\"n1\"]\n",
        );
        let steps = build_schedule(&s, 0, 10_000, 4);
        assert_eq!(
            steps,
            vec![
                Step {
                    at_ms: 9000,
                    action: Action::Partition {
                        nodes: vec!["n1".into()]
                    }
                },
                Step {
                    at_ms: 11_000,
                    action: Action::Heal {
                        nodes: vec!["n1".into()]
                    }
                },
            ]
        );
    }

    #[test]
    fn node_crash_is_followed_by_a_restart_after_its_duration() {
        let s = scenario(
            "[[nemesis]]\nfault = \"node-crash\"\nat_ms = 100\nduration_ms = 0\nnodes = [\"n1\"]\n[[nemesis]]\nfault = \"node-pause\"\nat_ms = 500\nduration_ms = 300\nnodes = [\"n1\"]\n",
        );
        let n1 = || vec!["n1".to_owned()];
        let steps = build_schedule(&s, 0, 10_000, 4);
        let got: Vec<(u64, Action)> = steps.into_iter().map(|s| (s.at_ms, s.action)).collect();
        assert_eq!(
            got,
            vec![
                (
                    100,
                    Action::CrashNodes {
                        members: Members::Named(n1()),
                        id: 0
                    }
                ),
                (100, Action::RestartNodes { id: 0 }),
                (
                    500,
                    Action::PauseNodes {
                        members: Members::Named(n1()),
                        id: 2
                    }
                ),
                (800, Action::ResumeNodes { id: 2 }),
            ]
        );
    }

    #[test]
    fn clock_strobe_flips_between_offset_and_real_time_then_resets() {
        let s = scenario(
            "[[nemesis]]\nfault = \"clock-strobe\"\nat_ms = 100\nduration_ms = 250\noffset_ms = -3000\nperiod_ms = 100\nnodes = [\"n1\"]\n",
        );
        let steps = build_schedule(&s, 0, 10_000, 4);
        let got: Vec<(u64, i64)> = steps
            .iter()
            .filter_map(|s| match &s.action {
                Action::SetClock { offset_ms, .. } => Some((s.at_ms, *offset_ms)),
                _ => None,
            })
            .collect();
        assert_eq!(got, vec![(100, -3000), (200, 0), (300, -3000)]);
        assert_eq!(
            steps.last().map(|s| (s.at_ms, s.action.clone())),
            Some((
                350,
                Action::ResetClock {
                    nodes: vec!["n1".to_owned()]
                }
            ))
        );
    }

    #[test]
    fn clock_strobe_flips_stop_at_the_end_of_the_run_and_stay_within_the_bound() {
        // An hour-long strobe in a 1 s run: flips only while the run lasts, then the reset.
        let s = scenario(
            "[[nemesis]]\nfault = \"clock-strobe\"\nat_ms = 500\nduration_ms = 3600000\noffset_ms = 1000\nperiod_ms = 10\nnodes = [\"n1\"]\n",
        );
        let steps = build_schedule(&s, 0, 1000, 4);
        assert_eq!(
            steps.len(),
            50 + 1,
            "flips at 500, 510, … 990, then the reset"
        );
        assert!(steps[..50].iter().all(|s| s.at_ms < 1000));
        assert!(steps.len() as u64 <= max_steps(&s.nemesis.faults[0], 1000));
    }

    #[test]
    fn count_limits_recurring_faults() {
        let s = scenario(
            "[[nemesis]]\nfault = \"client-crash\"\nat_ms = 100\nevery_ms = 100\ncount = 3\nclient = 2\n",
        );
        let steps = build_schedule(&s, 0, 10_000, 4);
        assert_eq!(steps.len(), 3);
        assert!(steps
            .iter()
            .all(|s| matches!(s.action, Action::CrashClient { client: 2, .. })));
    }
}
