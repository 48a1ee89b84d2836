//! Turns a scenario's fault list into a timed list of actions. Pure: the same scenario and seed
//! always give the same schedule.

use crate::scenario::{FaultKind, PausePoint, Scenario, Targets};
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
    CrashClient {
        client: usize,
        point: PausePoint,
    },
    /// Add latency to the links of `nodes`.
    Slow {
        nodes: Vec<String>,
        latency_ms: u64,
        jitter_ms: u64,
    },
    /// Cut the links of `nodes`.
    Partition {
        nodes: Vec<String>,
    },
    /// Remove the network faults of `nodes`.
    Heal {
        nodes: Vec<String>,
    },
    /// Cut the peer links between `members` and the other members; `id` pairs it with its
    /// [`Action::Rejoin`].
    Isolate {
        members: Members,
        id: usize,
    },
    /// Restore the peer links cut by the isolation `id`.
    Rejoin {
        id: usize,
    },
    /// SIGSTOP `members`; `id` pairs it with its [`Action::ResumeMembers`].
    PauseMembers {
        members: Members,
        id: usize,
    },
    ResumeMembers {
        id: usize,
    },
    /// SIGKILL `members`; `id` pairs it with its [`Action::RestartMembers`].
    KillMembers {
        members: Members,
        id: usize,
    },
    RestartMembers {
        id: usize,
    },
}

/// Cluster members a fault applies to: named in the schedule, or the leader, found when the
/// fault starts.
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
                    steps.push(Step {
                        at_ms: at,
                        action: Action::Slow {
                            nodes: nodes.clone(),
                            latency_ms: *latency_ms,
                            jitter_ms: *jitter_ms,
                        },
                    });
                    steps.push(Step {
                        at_ms: at + ms,
                        action: Action::Heal { nodes },
                    });
                }
                FaultKind::Isolate { targets, duration }
                | FaultKind::MemberPause { targets, duration }
                | FaultKind::MemberKill { targets, duration } => {
                    let members = pick_members(&mut rng, targets);
                    let ms = duration.draw(&mut rng);
                    let (start, end) = match &fault.kind {
                        FaultKind::Isolate { .. } => {
                            (Action::Isolate { members, id }, Action::Rejoin { id })
                        }
                        FaultKind::MemberPause { .. } => (
                            Action::PauseMembers { members, id },
                            Action::ResumeMembers { id },
                        ),
                        _ => (
                            Action::KillMembers { members, id },
                            Action::RestartMembers { id },
                        ),
                    };
                    steps.push(Step {
                        at_ms: at,
                        action: start,
                    });
                    steps.push(Step {
                        at_ms: at + ms,
                        action: end,
                    });
                }
                FaultKind::Partition { targets, duration } => {
                    let nodes = pick_nodes(&mut rng, targets);
                    let ms = duration.draw(&mut rng);
                    steps.push(Step {
                        at_ms: at,
                        action: Action::Partition {
                            nodes: nodes.clone(),
                        },
                    });
                    steps.push(Step {
                        at_ms: at + ms,
                        action: Action::Heal { nodes },
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
