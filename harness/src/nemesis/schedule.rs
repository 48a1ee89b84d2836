//! Turns a scenario's fault list into a timed list of actions. Pure: the same scenario and seed
//! always give the same schedule.

use crate::fault::{Plan, Step};
use crate::scenario::Scenario;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Draws the schedule for `scenario` with `seed`, covering `duration_ms` of workload. Steps are
/// sorted by time; a heal is scheduled even past the end so nothing stays broken.
pub fn build_schedule(
    scenario: &Scenario,
    seed: u64,
    duration_ms: u64,
    clients: usize,
) -> Vec<Step> {
    build_cycles(scenario, seed, duration_ms, clients, duration_ms)
}

/// A soak's schedule: the scenario's own schedule (its faults over its own workload length,
/// `cycle_ms`) drawn afresh for each cycle and laid end to end over `duration_ms`, so every
/// fault recurs for as long as the soak runs, as often as in the scenario.
pub fn build_soak_schedule(
    scenario: &Scenario,
    seed: u64,
    duration_ms: u64,
    clients: usize,
    cycle_ms: u64,
) -> Vec<Step> {
    build_cycles(scenario, seed, duration_ms, clients, cycle_ms.max(1))
}

fn build_cycles(
    scenario: &Scenario,
    seed: u64,
    duration_ms: u64,
    clients: usize,
    cycle_ms: u64,
) -> Vec<Step> {
    // A stream apart from the clients' so changing the workload does not move the faults.
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6E65_6D65_7369_7321);
    let nodes = scenario.node_names();
    let mut steps = Vec::new();
    let mut from = 0;
    while from < duration_ms {
        let to = from.saturating_add(cycle_ms).min(duration_ms);
        for fault in &scenario.nemesis.faults {
            let mut at = from + fault.at_ms.draw(&mut rng);
            let max_runs = match (fault.count, fault.every_ms) {
                (Some(n), _) => n as u64,
                (None, Some(_)) => u64::MAX,
                (None, None) => 1,
            };
            let mut runs = 0;
            while at < to && runs < max_runs {
                let mut plan = Plan::new(&mut rng, &nodes, clients, duration_ms, &mut steps);
                fault.spec.schedule(&mut plan, at);
                runs += 1;
                match fault.every_ms {
                    Some(every) => at += every.draw(&mut rng).max(1),
                    None => break,
                }
            }
        }
        from = to;
    }
    // Stable: actions at the same time keep the order of the scenario file.
    steps.sort_by_key(|s| s.at_ms);
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::max_steps;
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
    fn a_soak_lays_the_scenario_schedule_end_to_end_drawn_afresh() {
        let s = scenario(
            "[[nemesis]]\nfault = \"partition\"\nat_ms = [1000, 4000]\nduration_ms = [500, 1500]\nnodes = [\"n1\"]\n[[nemesis]]\nfault = \"node-crash\"\nnodes = [\"n1\"]\nat_ms = 300\nevery_ms = 2000\ncount = 2\nduration_ms = 200\n",
        );
        // One cycle is the scenario's own schedule.
        assert_eq!(
            build_soak_schedule(&s, 7, 10_000, 4, 10_000),
            build_schedule(&s, 7, 10_000, 4)
        );
        let steps = build_soak_schedule(&s, 7, 100_000, 4, 10_000);
        let json = json(&steps);
        let partitions: Vec<u64> = json
            .iter()
            .filter(|(_, a)| a.get("partition").is_some())
            .map(|(at, _)| *at)
            .collect();
        let crashes = json
            .iter()
            .filter(|(_, a)| a.get("crash-nodes").is_some())
            .count();
        // A partition in each of the ten cycles, inside the cycle's own window, drawn anew.
        assert_eq!(partitions.len(), 10, "{json:?}");
        for (k, at) in partitions.iter().enumerate() {
            let k = k as u64;
            assert!((k * 10_000 + 1000..=k * 10_000 + 4000).contains(at), "{at}");
        }
        assert!(
            partitions.windows(2).any(|w| w[1] - w[0] != 10_000),
            "drawn afresh"
        );
        // The node crash's count holds per cycle: two a cycle.
        assert_eq!(crashes, 20, "{json:?}");
        let mut open = std::collections::BTreeSet::new();
        for step in &steps {
            if let Some(id) = step.action.opens() {
                assert!(open.insert(id), "{id} opened twice");
            }
            if let Some(id) = step.action.closes() {
                assert!(open.remove(&id), "{id} closed before opened");
            }
        }
        assert!(open.is_empty(), "never closed: {open:?}");
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

    /// The steps as `(at_ms, action as schedule.json writes it)`.
    fn json(steps: &[Step]) -> Vec<(u64, serde_json::Value)> {
        steps.iter().map(|s| (s.at_ms, s.action_json())).collect()
    }

    #[test]
    fn network_faults_are_healed_after_their_duration() {
        let s = scenario(
            "[[nemesis]]\nfault = \"partition\"\nat_ms = 9000\nduration_ms = 2000\nnodes = [\"n1\"]\n",
        );
        let steps = build_schedule(&s, 0, 10_000, 4);
        assert_eq!(
            json(&steps),
            vec![
                (9000, serde_json::json!({"partition": {"nodes": ["n1"]}})),
                (11_000, serde_json::json!({"heal": {"nodes": ["n1"]}})),
            ]
        );
    }

    #[test]
    fn node_crash_is_followed_by_a_restart_after_its_duration() {
        let s = scenario(
            "[[nemesis]]\nfault = \"node-crash\"\nat_ms = 100\nduration_ms = 0\nnodes = [\"n1\"]\n[[nemesis]]\nfault = \"node-pause\"\nat_ms = 500\nduration_ms = 300\nnodes = [\"n1\"]\n",
        );
        let steps = build_schedule(&s, 0, 10_000, 4);
        assert_eq!(
            json(&steps),
            vec![
                (
                    100,
                    serde_json::json!({"crash-nodes": {"members": {"named": ["n1"]}, "id": 0}})
                ),
                (100, serde_json::json!({"restart-nodes": {"id": 0}})),
                (
                    500,
                    serde_json::json!({"pause-nodes": {"members": {"named": ["n1"]}, "id": 2}})
                ),
                (800, serde_json::json!({"resume-nodes": {"id": 2}})),
            ]
        );
    }

    #[test]
    fn clock_strobe_flips_between_offset_and_real_time_then_resets() {
        let s = scenario(
            "[[nemesis]]\nfault = \"clock-strobe\"\nat_ms = 100\nduration_ms = 250\noffset_ms = -3000\nperiod_ms = 100\nnodes = [\"n1\"]\n",
        );
        let steps = build_schedule(&s, 0, 10_000, 4);
        let got: Vec<(u64, i64)> = json(&steps)
            .iter()
            .filter_map(|(at, a)| Some((*at, a.get("set-clock")?["offset_ms"].as_i64()?)))
            .collect();
        assert_eq!(got, vec![(100, -3000), (200, 0), (300, -3000)]);
        assert_eq!(
            json(&steps).last().cloned(),
            Some((350, serde_json::json!({"reset-clock": {"nodes": ["n1"]}})))
        );
    }

    #[test]
    fn the_schedule_file_names_each_step_and_its_fields_in_order() {
        let s = scenario(
            "[[nemesis]]\nfault = \"client-pause\"\nat_ms = 5\nclient = 1\nduration_ms = 700\npoint = \"before-write\"\n[[nemesis]]\nfault = \"clock-jump\"\nat_ms = 10\nduration_ms = 20\noffset_ms = 3\nnodes = [\"n1\"]\n",
        );
        let text = serde_json::to_string(&build_schedule(&s, 0, 10_000, 4)).unwrap();
        assert_eq!(
            text,
            concat!(
                r#"[{"at_ms":5,"action":{"pause-client":{"client":1,"point":"before-write","ms":700}}},"#,
                r#"{"at_ms":10,"action":{"set-clock":{"nodes":["n1"],"offset_ms":3,"rate_milli":null}}},"#,
                r#"{"at_ms":30,"action":{"reset-clock":{"nodes":["n1"]}}}]"#
            )
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
        assert!(json(&steps)
            .iter()
            .all(|(_, a)| a["crash-client"]["client"] == 2));
    }
}
