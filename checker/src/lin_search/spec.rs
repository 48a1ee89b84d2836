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
    /// True when taking `op`, if its outcome is unknown, can only narrow what may follow:
    /// whatever the rest of the history can do after it, it can do from the state before it
    /// as well, to a state at least as permissive. The search then leaves it out when its
    /// outcome is unknown, as if it never took effect. A lock acquired by a client that was
    /// retired (Jepsen's `info`) is one: it only keeps others out, and its owner never acts
    /// again. Without this, every such acquire doubles what the search may have to try.
    fn never_needed(&self, op: usize) -> bool {
        let _ = op;
        false
    }
    /// True when `op` only ever grows the state: the state after it is one that the state
    /// before can grow into (see [`Spec::can_grow_into`]), as a kv append extends a string.
    /// Read-only operations need not say so.
    fn grows(&self, op: usize) -> bool {
        let _ = op;
        false
    }
    /// False only when no state that `state` can grow into, itself included, lets the
    /// read-only operation `read` take effect, as no string that starts with "ab" reads "b".
    /// The search then drops a state after which `read` must come with nothing but growing
    /// and read-only operations in between (see `growth`). True when unsure.
    fn can_grow_into(&self, state: &Self::State, read: usize) -> bool {
        let _ = (state, read);
        true
    }
    /// [`Spec::step`], except that a resulting state that cannot grow into `read` (see
    /// [`Spec::can_grow_into`]) is refused as well. A model may override it to refuse such a
    /// state before building it.
    fn step_toward(
        &mut self,
        state: &Self::State,
        op: usize,
        read: Option<usize>,
    ) -> Option<Self::State> {
        let next = self.step(state, op)?;
        match read {
            Some(r) if !self.can_grow_into(&next, r) => None,
            _ => Some(next),
        }
    }
    /// A human-readable rendering of a state.
    fn describe(&self, state: &Self::State) -> String;
}
