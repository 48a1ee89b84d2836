//! Linearizability of one lock's operations, decided while the history streams by Lowe's
//! just-in-time linearization: the check keeps every configuration the lock can be in — a
//! model state, and which operations in flight have already taken effect — and takes an
//! operation only when its return forces it. Memory is the operations in flight and the
//! configurations over them, never the history behind them, so a history of any length is
//! checked in what is open; the search ([`crate::lin_search`]) then only explains a
//! violation, from a second reading of that lock's operations.
//!
//! It decides exactly what the search decides on the whole lock's history: a configuration
//! stands for every linearization of the operations returned so far, and an operation in
//! flight may still take effect at any point up to its return. Where too much is open to
//! follow (more than [`MAX_OPEN`] operations in flight, or more configurations than
//! [`MAX_CONFIGS`]) it gives up, and the search decides from a second reading.

pub(crate) mod model;
#[cfg(test)]
mod tests;

use model::{Pending, StreamModel};
use std::collections::HashSet;

/// Operations in flight (and of unknown outcome) one lock may have: one bit each.
const MAX_OPEN: u32 = u64::BITS;
/// Configurations followed at once; lock histories keep a handful.
const MAX_CONFIGS: usize = 64;
/// Configurations visited while one return is taken.
const MAX_VISITS: usize = 4096;
/// Configurations visited per return on average, past a first allowance: the check stays
/// linear in the history. Contended leases can make every waiter a candidate to take over
/// from an expired holder at every return; a lock that costs more is left to the search.
const VISITS_PER_RETURN: u64 = 64;
const VISITS_ALLOWANCE: u64 = 1 << 16;

/// One lock's operations in flight, by slot.
#[derive(Debug, Default)]
pub(crate) struct Open {
    ops: Vec<Pending>,
    /// Slots in use.
    used: u64,
    /// Slots of operations that will never return (`info`, or a process that moved on): they
    /// may take effect at any later point, or never.
    forgone: u64,
}

impl Open {
    /// A slot for `op`; `None` when every slot is in use.
    pub fn add(&mut self, op: Pending) -> Option<u8> {
        if self.used.count_ones() == MAX_OPEN {
            return None;
        }
        let free = !self.used;
        let slot = free.trailing_zeros() as usize;
        if self.ops.len() <= slot {
            self.ops.resize(slot + 1, op);
        }
        self.ops[slot] = op;
        self.used |= 1 << slot;
        Some(slot as u8)
    }

    /// The operation in `slot` returned or failed.
    pub fn remove(&mut self, slot: u8) {
        self.used &= !(1 << slot);
        self.forgone &= !(1 << slot);
    }

    /// The operation in `slot` will never return.
    pub fn forgo(&mut self, slot: u8) {
        self.forgone |= 1 << slot;
    }

    /// The operation in `slot`; `None` when the slot is not in use (the check gave up and
    /// let go of what was in flight).
    pub fn op(&self, slot: u8) -> Option<&Pending> {
        (self.used & (1 << slot) != 0).then(|| &self.ops[slot as usize])
    }

    /// Whether an operation in flight other than the one in `slot` is its owner's.
    pub fn owner_has_another(&self, slot: u8) -> bool {
        let owner = self.ops[slot as usize].owner;
        let mut others = self.used & !(1 << slot);
        while others != 0 {
            let q = others.trailing_zeros() as usize;
            others &= others - 1;
            if self.ops[q].owner == owner {
                return true;
            }
        }
        false
    }
}

/// A state the lock can be in after the operations returned so far.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Config<S> {
    state: S,
    /// Operations in flight that already took effect, by slot.
    taken: u64,
    /// For an acquire in flight that took effect: the earliest return that allows it (the
    /// lease model's takeover), by slot; most configurations have none.
    needs: Vec<(u8, u64)>,
}

impl<S: Clone> Config<S> {
    fn need(&self, slot: u8) -> u64 {
        self.needs
            .iter()
            .find(|&&(s, _)| s == slot)
            .map_or(0, |&(_, n)| n)
    }

    /// The same configuration once the operation in `slot` has returned.
    fn without(&self, slot: u8) -> Config<S> {
        Config {
            state: self.state.clone(),
            taken: self.taken & !(1 << slot),
            needs: self
                .needs
                .iter()
                .copied()
                .filter(|&(s, _)| s != slot)
                .collect(),
        }
    }
}

/// What the check has found so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Linearizable so far.
    Going,
    /// No configuration is left: the history cannot be linearized.
    Violated,
    /// Too much open to follow: undecided.
    GaveUp,
}

/// The check of one lock against one model.
#[derive(Debug)]
pub(crate) struct LockLin<M: StreamModel> {
    configs: Vec<Config<M::State>>,
    outcome: Outcome,
    /// Configurations visited, and returns taken, so far.
    visits: u64,
    returns: u64,
    /// Scratch for taking a return, kept to spare an allocation per event.
    next: Vec<Config<M::State>>,
    visited: HashSet<Config<M::State>>,
    stack: Vec<Config<M::State>>,
}

impl<M: StreamModel> Default for LockLin<M> {
    fn default() -> Self {
        LockLin {
            configs: vec![Config {
                state: M::INIT,
                taken: 0,
                needs: Vec::new(),
            }],
            outcome: Outcome::Going,
            visits: 0,
            returns: 0,
            next: Vec::new(),
            visited: HashSet::new(),
            stack: Vec::new(),
        }
    }
}

impl<M: StreamModel> LockLin<M> {
    pub fn outcome(&self) -> Outcome {
        self.outcome
    }

    /// Stops following: the search decides this lock.
    pub fn give_up(&mut self) {
        self.end(Outcome::GaveUp);
    }

    fn end(&mut self, outcome: Outcome) {
        self.outcome = outcome;
        // What is no longer followed is freed.
        for v in [&mut self.configs, &mut self.next, &mut self.stack] {
            *v = Vec::new();
        }
        self.visited = HashSet::new();
    }

    /// The operation in `slot` of `open` returned `ok` at `ret_ns`: every configuration
    /// must have it taken, by taking it now after any of the operations in flight (which
    /// are then taken too).
    pub fn returned(&mut self, open: &Open, slot: u8, ret_ns: u64) {
        if self.outcome != Outcome::Going {
            return;
        }
        let bit = 1u64 << slot;
        let mut next = std::mem::take(&mut self.next);
        let mut visited = std::mem::take(&mut self.visited);
        let mut stack = std::mem::take(&mut self.stack);
        next.clear();
        if visited.capacity() > 1024 {
            // Clearing walks the whole table: one large return must not slow every other.
            visited = HashSet::new();
        }
        visited.clear();
        let mut too_many = false;
        for c in &self.configs {
            if c.taken & bit != 0 {
                if c.need(slot) <= ret_ns {
                    add_new(&mut next, c.without(slot));
                }
                continue;
            }
            if !visited.insert(c.clone()) {
                continue;
            }
            stack.push(c.clone());
            while let Some(x) = stack.pop() {
                let mut untaken = open.used & !x.taken;
                while untaken != 0 {
                    let q = untaken.trailing_zeros() as u8;
                    untaken &= untaken - 1;
                    let op = &open.ops[q as usize];
                    let Some((state, need)) = M::step(&x.state, op) else {
                        continue;
                    };
                    if q == slot {
                        if need <= ret_ns {
                            add_new(
                                &mut next,
                                Config {
                                    state,
                                    taken: x.taken,
                                    needs: x.needs.clone(),
                                },
                            );
                        }
                        continue;
                    }
                    let forgone = open.forgone & (1 << q) != 0;
                    if forgone && state == x.state {
                        // An operation that may never happen and changes nothing cannot
                        // help (the search's own pruning).
                        continue;
                    }
                    let mut needs = x.needs.clone();
                    // One that never returns may have returned as late as it likes.
                    if need > 0 && !forgone {
                        let at = needs.partition_point(|&(s, _)| s < q);
                        needs.insert(at, (q, need));
                    }
                    let y = Config {
                        state,
                        taken: x.taken | (1 << q),
                        needs,
                    };
                    if !visited.contains(&y) {
                        visited.insert(y.clone());
                        stack.push(y);
                    }
                }
                if visited.len() > MAX_VISITS || next.len() > MAX_CONFIGS {
                    too_many = true;
                    break;
                }
            }
            if too_many {
                break;
            }
        }
        stack.clear();
        self.returns += 1;
        self.visits += visited.len() as u64;
        too_many |= self.visits > VISITS_PER_RETURN * self.returns + VISITS_ALLOWANCE;
        prune(&mut next, open.forgone);
        std::mem::swap(&mut self.configs, &mut next);
        (self.next, self.visited, self.stack) = (next, visited, stack);
        if too_many {
            self.end(Outcome::GaveUp);
        } else if self.configs.is_empty() {
            self.end(Outcome::Violated);
        }
    }

    /// The operation in `slot` failed: it did not happen, so no configuration may have taken
    /// it.
    pub fn failed(&mut self, slot: u8) {
        if self.outcome != Outcome::Going {
            return;
        }
        self.configs.retain(|c| c.taken & (1 << slot) == 0);
        if self.configs.is_empty() {
            self.end(Outcome::Violated);
        }
    }

    /// The operation in `slot` will never return (`open` says so already): whenever it took
    /// effect, it returned late enough.
    pub fn forgone(&mut self, open: &Open, slot: u8) {
        if self.outcome != Outcome::Going {
            return;
        }
        for c in &mut self.configs {
            c.needs.retain(|&(s, _)| s != slot);
        }
        let configs = std::mem::take(&mut self.configs);
        for c in configs {
            add_new(&mut self.configs, c);
        }
        prune(&mut self.configs, open.forgone);
    }

    /// The operation in `slot` will never return and is taken never to have happened: the
    /// configurations that took it are dropped. When its owner acts no more, the same
    /// operations without it lead where it led or somewhere more permissive (see
    /// [`crate::lin_search::Spec::never_needed`]), so nothing is lost; should it act again, a
    /// violation found from then on may be one only without it, and the caller leaves it to
    /// the search. The caller then frees the slot.
    pub fn never_needed(&mut self, slot: u8) {
        if self.outcome != Outcome::Going {
            return;
        }
        self.configs.retain(|c| c.taken & (1 << slot) == 0);
        for c in &mut self.configs {
            c.needs.retain(|&(s, _)| s != slot);
        }
        if self.configs.is_empty() {
            // It was needed after all: the search decides.
            self.end(Outcome::GaveUp);
        }
    }
}

/// Drops the configurations another one covers: the same state with the same operations in
/// flight taken, fewer of those that may never happen taken (each can still be taken later
/// or never), and no stricter bound on a return. What the dropped one can still do, the
/// other can too, so the verdict stays; without this, operations of unknown outcome would
/// double the configurations each.
fn prune<S: PartialEq + Clone>(configs: &mut Vec<Config<S>>, forgone: u64) {
    if configs.len() < 2 {
        return;
    }
    let covers = |b: &Config<S>, a: &Config<S>| {
        b.state == a.state
            && b.taken & !forgone == a.taken & !forgone
            && b.taken & forgone & !a.taken == 0
            && b.needs.iter().all(|&(s, n)| a.need(s) >= n)
    };
    let mut keep = vec![true; configs.len()];
    for i in 0..configs.len() {
        keep[i] =
            !(0..configs.len()).any(|j| j != i && keep[j] && covers(&configs[j], &configs[i]));
    }
    let mut k = keep.iter();
    configs.retain(|_| *k.next().expect("one flag per configuration"));
}

fn add_new<S: PartialEq>(to: &mut Vec<Config<S>>, c: Config<S>) {
    if !to.contains(&c) {
        to.push(c);
    }
}
