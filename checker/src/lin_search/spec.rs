//! The interface between the search and a model: a sequential specification prepared for the
//! operations of one independent part of a history.

use std::hash::Hash;

/// One independent part of a history (P-compositionality), ready for the search.
#[derive(Clone)]
pub struct Part<S> {
    /// What the part is about, for reports: `key "3"`, `lock "l"`, or `register`.
    pub label: String,
    /// Index into [`super::History::ops`] of each of the part's operations. The spec's `step`
    /// receives positions into this vector.
    pub ops: Vec<usize>,
    pub spec: S,
}

/// A sequential specification bound to the operations of one part.
///
/// `step` must be a pure function of `(state, op)` even though it takes `&mut self`: the
/// mutable access exists only for memo tables (interned strings) that make it cheap.
pub trait Spec: Send + Clone {
    type State: Clone + Eq + Hash + Send;
    /// The state before any operation.
    fn init(&mut self) -> Self::State;
    /// The state after applying operation `op` (a position in [`Part::ops`]) to `state`, or
    /// `None` if the operation cannot take effect there with the result it returned. For an
    /// operation whose outcome is unknown, `step` must accept every state in which it could
    /// have taken effect: the search covers "never took effect" by itself.
    fn step(&mut self, state: &Self::State, op: usize) -> Option<Self::State>;
    /// True when `op` never changes the state when it can take effect (a read). The search
    /// then takes it as soon as it can and never tries alternatives to that choice: a read
    /// that is possible now stays possible first in any linearization of the rest.
    fn read_only(&self, op: usize) -> bool {
        let _ = op;
        false
    }
    /// Operations with equal keys have the same `step` (same arguments and, for an unknown
    /// outcome, the same possible results). The search then tries only the earliest-invoked
    /// of interchangeable operations of unknown outcome. `None` when unique.
    fn effect_key(&self, op: usize) -> Option<u64> {
        let _ = op;
        None
    }
    /// A human-readable rendering of a state.
    fn describe(&self, state: &Self::State) -> String;
}
