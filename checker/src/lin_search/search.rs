//! The Wing–Gong–Lowe search for one part: a doubly linked list of call and return entries in
//! real-time order, a stack of linearized calls with lift/unlift for backtracking, and a memo
//! of visited (linearized set, state) configurations, hashed in O(1) per step by XOR-ing
//! per-operation Zobrist keys.
//!
//! Pruning on top of Lowe's algorithm, each sound and complete:
//! - the search ends once every completed operation is linearized (the rest may never have
//!   happened);
//! - a read that can be taken now is taken without trying alternatives to it;
//! - an operation of unknown outcome that would not change the state is never taken, nor one
//!   the model says is never needed (see [`Spec::never_needed`]);
//! - of interchangeable operations of unknown outcome, only the earliest-invoked untaken one
//!   is a candidate;
//! - a state that cannot grow into what the next read must read is never entered (see
//!   `growth`).

use super::budget::{Limits, Stop};
use super::cache::Cache;
use super::growth::{Growth, Span};
use super::hash::hash_one;
use super::linset::LinSet;
use super::op::History;
use super::spec::{Part, Spec};

/// What the search concluded about one part.
#[derive(Debug, Clone)]
pub enum PartOutcome {
    Linearizable,
    Illegal(Failure),
    Stopped(Stop),
}

/// Evidence for a non-linearizable part.
#[derive(Debug, Clone)]
pub struct Failure {
    /// History indices of the longest linearizable prefix found, in linearization order.
    pub prefix: Vec<usize>,
    /// The model state after that prefix.
    pub state: String,
    /// History indices of the operations that would have to come next, none of which can:
    /// the not-yet-linearized operation that returned first, and every not-yet-linearized
    /// operation invoked before it returned. In invocation order.
    pub pending: Vec<usize>,
}

const HEAD: u32 = 0;

/// How an operation takes part in a search that may see only a prefix of the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Presence {
    /// Not part of this search: invoked after the cut, left out, or of unknown outcome and
    /// never needed.
    Excluded,
    /// Outcome unknown, or returned after the cut: may take effect or not.
    Open,
    Completed,
}

fn presence(op: &super::op::Op, cut: u64) -> Presence {
    if op.call > cut {
        Presence::Excluded
    } else if op.is_open() || op.ret.is_some_and(|r| r > cut) {
        Presence::Open
    } else {
        Presence::Completed
    }
}

/// The entry list: node 0 is the head, nodes `1..=2n` the entries in time order, `2n+1` the
/// tail, so lift/unlift never test for ends.
struct List {
    next: Vec<u32>,
    prev: Vec<u32>,
    /// For a call node, its return node; 0 for a return node.
    mate: Vec<u32>,
    op: Vec<u32>,
}

impl List {
    /// Entries of the operations in `view` that are not excluded.
    fn new(view: &[Presence], history: &History, part_ops: &[usize]) -> List {
        let n = part_ops.len();
        let mut events: Vec<(u64, u8, u32)> = Vec::with_capacity(2 * n);
        for (i, &h) in part_ops.iter().enumerate() {
            let op = &history.ops[h];
            let ret = match view[i] {
                Presence::Excluded => continue,
                Presence::Open => u64::MAX,
                Presence::Completed => op.ret.expect("completed op has ret"),
            };
            // At equal times a call sorts before a return, making the two concurrent: the
            // lenient reading, which can only turn a violation into a pass, never the reverse.
            events.push((op.call, 0, i as u32));
            events.push((ret, 1, i as u32));
        }
        events.sort_unstable();
        let len = events.len() + 2;
        let mut list = List {
            next: (1..=len as u32).collect(),
            prev: (0..len as u32).map(|i| i.wrapping_sub(1)).collect(),
            mate: vec![0; len],
            op: vec![0; len],
        };
        let mut call_node = vec![0u32; n.max(1)];
        for (k, &(_, kind, i)) in events.iter().enumerate() {
            let node = k as u32 + 1;
            list.op[node as usize] = i;
            if kind == 0 {
                call_node[i as usize] = node;
            } else {
                list.mate[call_node[i as usize] as usize] = node;
            }
        }
        list
    }

    #[inline]
    fn lift(&mut self, e: u32) {
        let (p, n) = (self.prev[e as usize], self.next[e as usize]);
        self.next[p as usize] = n;
        self.prev[n as usize] = p;
        let m = self.mate[e as usize];
        let (p, n) = (self.prev[m as usize], self.next[m as usize]);
        self.next[p as usize] = n;
        self.prev[n as usize] = p;
    }

    #[inline]
    fn unlift(&mut self, e: u32) {
        let m = self.mate[e as usize];
        let (p, n) = (self.prev[m as usize], self.next[m as usize]);
        self.next[p as usize] = m;
        self.prev[n as usize] = m;
        let (p, n) = (self.prev[e as usize], self.next[e as usize]);
        self.next[p as usize] = e;
        self.prev[n as usize] = e;
    }
}

/// A search in progress over one part, resumable so that parts can take turns: an invalid
/// history needs only one illegal part, and that part may be quick while another is slow.
pub struct Search<S: Spec> {
    part: Part<S>,
    list: List,
    view: Vec<Presence>,
    open: Vec<bool>,
    /// Read-only in every state (see [`Spec::read_only`]).
    read_only: Vec<bool>,
    /// For an operation of unknown outcome, the previous-invoked one with the same effect
    /// (see [`Spec::effect_key`]), which must be linearized first; `NO_OP` if none.
    before: Vec<u32>,
    /// Growth pruning, for a spec with growing operations.
    growth: Option<Growth>,
    lin: LinSet,
    /// Scratch buffer for the memo key of the current linearized set.
    key: Vec<u64>,
    state: S::State,
    cache: Cache<S::State>,
    /// Linearized call nodes, the state before each, and whether it was forced (a read-only
    /// operation taken as soon as it could be, which never needs an alternative).
    stack: Vec<(u32, S::State, bool)>,
    remaining: usize,
    entry: u32,
    best: Vec<u32>,
    /// How much of the stack still equals the start of `best`: the lowest the stack has
    /// been since `best` was recorded, so recording copies only what changed.
    same: usize,
    best_state: S::State,
    done: Option<PartOutcome>,
    /// Memo bytes last reported to the shared memory budget.
    reported: usize,
}

impl<S: Spec> Search<S> {
    pub fn new(part: Part<S>, history: &History) -> Self {
        Self::with_cut(part, history, u64::MAX)
    }

    /// A search over the prefix of the part's history up to position `cut`: operations
    /// invoked later are left out, those returning later have an unknown outcome.
    pub fn with_cut(part: Part<S>, history: &History, cut: u64) -> Self {
        Self::leaving_out(part, history, cut, None)
    }

    /// [`Search::with_cut`], with the part's operation at position `left_out` left out too,
    /// as if it had never been invoked: whether the rest is linearizable without it.
    pub fn leaving_out(
        mut part: Part<S>,
        history: &History,
        cut: u64,
        left_out: Option<usize>,
    ) -> Self {
        let n = part.ops.len();
        let mut view: Vec<Presence> = part
            .ops
            .iter()
            .map(|&h| presence(&history.ops[h], cut))
            .collect();
        if let Some(i) = left_out {
            view[i] = Presence::Excluded;
        }
        for (i, v) in view.iter_mut().enumerate() {
            if *v == Presence::Open && part.spec.never_needed(i) {
                *v = Presence::Excluded;
            }
        }
        let open: Vec<bool> = view.iter().map(|&v| v != Presence::Completed).collect();
        let read_only: Vec<bool> = (0..n).map(|i| part.spec.read_only(i)).collect();
        let before = symmetric_predecessors(&part, &view, history);
        let spans: Vec<Option<Span>> = part
            .ops
            .iter()
            .zip(&view)
            .map(|(&h, v)| match v {
                Presence::Excluded => None,
                Presence::Open => Some(Span {
                    call: history.ops[h].call,
                    ret: None,
                }),
                Presence::Completed => Some(Span {
                    call: history.ops[h].call,
                    ret: history.ops[h].ret,
                }),
            })
            .collect();
        let growth = Growth::new(&part.spec, &spans, &read_only);
        // Operations with unknown outcome may never take effect, so once every completed one
        // is linearized the rest can be left out: the search is done.
        let remaining = open.iter().filter(|&&o| !o).count();
        let list = List::new(&view, history, &part.ops);
        let calls: Vec<u64> = part.ops.iter().map(|&h| history.ops[h].call).collect();
        let lin = LinSet::new(&open, &calls);
        let mut key = Vec::new();
        let state = part.spec.init();
        let mut cache: Cache<S::State> = Cache::new(lin.fixed_width());
        cache.insert(hash_one(&state), lin.key(&mut key), &state);
        let best_state = state.clone();
        let entry = list.next[HEAD as usize];
        Search {
            part,
            list,
            view,
            open,
            read_only,
            before,
            growth,
            lin,
            key,
            state,
            cache,
            stack: Vec::with_capacity(n),
            remaining,
            entry,
            best: Vec::new(),
            same: 0,
            best_state,
            done: (remaining == 0).then_some(PartOutcome::Linearizable),
            reported: 0,
        }
    }

    /// Gives the part back, for another search over it.
    pub fn into_part(self) -> Part<S> {
        self.part
    }

    /// Runs up to about `quantum` steps; returns the outcome once decided.
    pub fn run(&mut self, quantum: u64, history: &History, limits: &Limits) -> Option<PartOutcome> {
        if self.done.is_none() {
            self.done = self.steps(quantum, history, limits);
            if self.done.is_some() {
                limits.release(std::mem::take(&mut self.reported));
            }
        }
        self.done.clone()
    }

    /// Undoes linearized operations until one that may have an alternative; false when the
    /// stack ran empty (nothing left to try).
    #[inline]
    fn backtrack(&mut self) -> bool {
        loop {
            let Some((top, prev_state, forced)) = self.stack.pop() else {
                return false;
            };
            let i = self.list.op[top as usize] as usize;
            self.lin.remove(i);
            if let Some(g) = &mut self.growth {
                g.undone(i);
            }
            self.state = prev_state;
            self.list.unlift(top);
            if !self.open[i] {
                self.remaining += 1;
            }
            self.entry = self.list.next[top as usize];
            self.same = self.same.min(self.stack.len());
            if !forced {
                return true;
            }
        }
    }

    fn steps(&mut self, quantum: u64, history: &History, limits: &Limits) -> Option<PartOutcome> {
        let mut e = self.entry;
        let mut steps: u64 = 0;
        loop {
            steps += 1;
            // Often enough for the first quantum (run.rs), rarely enough to cost nothing.
            if steps & 0x3ff == 0 {
                if let Some(stop) = limits.exceeded(&mut self.reported, self.cache.bytes()) {
                    return Some(PartOutcome::Stopped(stop));
                }
                if steps >= quantum {
                    self.entry = e;
                    return None;
                }
            }
            let m = self.list.mate[e as usize];
            if m != 0 {
                let i = self.list.op[e as usize] as usize;
                let b = self.before[i];
                if b != NO_OP && !self.lin.contains(b as usize) {
                    // An interchangeable, earlier operation is still available: using this
                    // one instead could only repeat what that one leads to.
                    e = self.list.next[e as usize];
                    continue;
                }
                // Whatever comes before that read, a state that cannot grow into what it read
                // is a dead end.
                let read = match &self.growth {
                    Some(g) if !self.read_only[i] => g.witness(i, &self.lin),
                    _ => None,
                };
                if let Some(next_state) = self.part.spec.step_toward(&self.state, i, read) {
                    if self.open[i] && next_state == self.state {
                        // Taking an operation that may never happen and changes nothing
                        // cannot help.
                        e = self.list.next[e as usize];
                        continue;
                    }
                    self.lin.insert(i);
                    let forced = self.read_only[i];
                    let hash = self.lin.hash() ^ hash_one(&next_state);
                    let key = self.lin.key(&mut self.key);
                    if self.cache.insert(hash, key, &next_state) {
                        let prev = std::mem::replace(&mut self.state, next_state);
                        self.stack.push((e, prev, forced));
                        if let Some(g) = &mut self.growth {
                            g.taken(i, &self.lin);
                        }
                        self.list.lift(e);
                        if !self.open[i] {
                            self.remaining -= 1;
                            if self.remaining == 0 {
                                return Some(PartOutcome::Linearizable);
                            }
                        }
                        if self.stack.len() > self.best.len() {
                            self.best.truncate(self.same);
                            let op = &self.list.op;
                            self.best.extend(
                                self.stack[self.same..]
                                    .iter()
                                    .map(|&(node, _, _)| op[node as usize]),
                            );
                            self.same = self.stack.len();
                            self.best_state = self.state.clone();
                        }
                        e = self.list.next[HEAD as usize];
                        continue;
                    }
                    self.lin.remove(i);
                    if forced {
                        // This configuration leads where taking the read first led, and
                        // that is already known to fail.
                        if !self.backtrack() {
                            return Some(self.illegal(history));
                        }
                        e = self.entry;
                        continue;
                    }
                }
                e = self.list.next[e as usize];
            } else {
                // The earliest return among unlinearized operations: nothing after it may be
                // linearized before its operation, so undo the last choice.
                if !self.backtrack() {
                    return Some(self.illegal(history));
                }
                e = self.entry;
            }
        }
    }

    fn illegal(&self, history: &History) -> PartOutcome {
        PartOutcome::Illegal(explain(
            &self.part.ops,
            &self.view,
            history,
            &self.best,
            self.part.spec.describe(&self.best_state),
        ))
    }
}

const NO_OP: u32 = u32::MAX;

/// For each open operation, the latest earlier-invoked open operation with the same effect.
fn symmetric_predecessors<S: Spec>(
    part: &Part<S>,
    view: &[Presence],
    history: &History,
) -> Vec<u32> {
    let mut before = vec![NO_OP; part.ops.len()];
    let mut open: Vec<(u64, u64, usize)> = (0..part.ops.len())
        .filter(|&i| view[i] == Presence::Open)
        .filter_map(|i| {
            let key = part.spec.effect_key(i)?;
            Some((key, history.ops[part.ops[i]].call, i))
        })
        .collect();
    open.sort_unstable();
    for w in open.windows(2) {
        if w[0].0 == w[1].0 {
            before[w[1].2] = w[0].2 as u32;
        }
    }
    before
}

fn explain(
    part_ops: &[usize],
    view: &[Presence],
    history: &History,
    best: &[u32],
    state: String,
) -> Failure {
    let mut done = vec![false; part_ops.len()];
    for &i in best {
        done[i as usize] = true;
    }
    let rest: Vec<usize> = (0..part_ops.len())
        .filter(|&i| !done[i] && view[i] != Presence::Excluded)
        .collect();
    let blocker = rest
        .iter()
        .filter(|&&i| view[i] == Presence::Completed)
        .filter_map(|&i| history.ops[part_ops[i]].ret)
        .min()
        .unwrap_or(u64::MAX);
    let mut pending: Vec<usize> = rest
        .iter()
        .map(|&i| part_ops[i])
        .filter(|&h| history.ops[h].call < blocker)
        .collect();
    pending.sort_by_key(|&h| history.ops[h].call);
    Failure {
        prefix: best.iter().map(|&i| part_ops[i as usize]).collect(),
        state,
        pending,
    }
}
