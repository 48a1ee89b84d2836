//! What a fault draws its schedule steps with: the nemesis's seeded random stream, the run's
//! nodes and clients, and the list the steps go into.

use super::step::{Step, StepAction};
use super::targets::Targets;
use crate::vocab::MsRange;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// The schedule being drawn.
pub struct Plan<'a> {
    rng: &'a mut ChaCha8Rng,
    nodes: &'a [String],
    clients: usize,
    /// Length of the workload; a step at or past it never runs (heals run anyway).
    pub duration_ms: u64,
    steps: &'a mut Vec<Step>,
}

impl<'a> Plan<'a> {
    pub fn new(
        rng: &'a mut ChaCha8Rng,
        nodes: &'a [String],
        clients: usize,
        duration_ms: u64,
        steps: &'a mut Vec<Step>,
    ) -> Plan<'a> {
        Plan {
            rng,
            nodes,
            clients,
            duration_ms,
            steps,
        }
    }

    /// A value from `range`, drawn with the seed.
    pub fn draw(&mut self, range: MsRange) -> u64 {
        range.draw(self.rng)
    }

    /// A seed for something drawn later, when the step runs (the moment of a pause inside a
    /// request), drawn with the schedule's seed.
    pub fn seed(&mut self) -> u64 {
        self.rng.random()
    }

    /// Client `fixed`, or one drawn with the seed.
    pub fn client(&mut self, fixed: Option<usize>) -> usize {
        fixed.unwrap_or_else(|| self.rng.random_range(0..self.clients))
    }

    /// One of the run's nodes, drawn with the seed.
    pub fn random_node(&mut self) -> String {
        self.nodes[self.rng.random_range(0..self.nodes.len())].clone()
    }

    /// The nodes `targets` names, for faults that cannot aim at the leader.
    pub fn nodes(&mut self, targets: &Targets) -> Vec<String> {
        match targets {
            Targets::All => self.nodes.to_vec(),
            Targets::RandomOne => vec![self.random_node()],
            Targets::Nodes(n) => n.clone(),
            // Refused when the scenario is read: only member faults may name the leader.
            Targets::Leader => self.nodes.to_vec(),
        }
    }

    /// The id of a fault started now: the index of its first step before sorting.
    pub fn id(&self) -> usize {
        self.steps.len()
    }

    /// Adds `action` at `at_ms`.
    pub fn push(&mut self, at_ms: u64, action: impl StepAction + 'static) {
        self.steps.push(Step {
            at_ms,
            action: Arc::new(action),
        });
    }

    /// Adds `start` at `at` and `end` `ms` later: the two ends of a fault that lasts. The end
    /// is scheduled even past the end of the run, so nothing stays broken.
    pub fn window(
        &mut self,
        at: u64,
        ms: u64,
        start: impl StepAction + 'static,
        end: impl StepAction + 'static,
    ) {
        self.push(at, start);
        self.push(at + ms, end);
    }
}
