//! A schedule step: one thing a fault does at a time, which the fault's module defines and
//! carries out. A step that opens a fault leaves a [`Heal`] in [`OpenFaults`]; the step that
//! closes it, or the nemesis at the end of the run, takes it and heals.

use super::{NemesisCtx, NemesisError};
use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// What carrying out a step or a heal returns.
pub type StepFuture<'a> = Pin<Box<dyn Future<Output = Result<(), NemesisError>> + Send + 'a>>;

/// One thing the nemesis does, as a fault's module defines it.
pub trait StepAction: fmt::Debug + Send + Sync {
    /// Its name in `schedule.json`.
    fn tag(&self) -> &'static str;
    /// Its fields in `schedule.json`, in order.
    fn fields(&self) -> Vec<(&'static str, serde_json::Value)>;
    /// The id of the fault on nodes this step starts, if it starts one whose end must be
    /// delayed as much as its start was late (a slow step delays the next ones).
    fn opens(&self) -> Option<usize> {
        None
    }
    /// The id of the fault on nodes this step ends, if it ends one.
    fn closes(&self) -> Option<usize> {
        None
    }
    /// Carries the step out, recording it in the history.
    fn apply<'a>(&'a self, ctx: &'a NemesisCtx, open: &'a mut OpenFaults) -> StepFuture<'a>;
}

/// Undoes a fault in force: the other half of the verb that opened it.
pub trait Heal: Send + Sync {
    fn heal<'a>(&'a self, ctx: &'a NemesisCtx) -> StepFuture<'a>;
}

/// The faults in force, by the id of the step that opened them, each with its heal.
#[derive(Default)]
pub struct OpenFaults {
    open: BTreeMap<usize, Box<dyn Heal>>,
}

impl OpenFaults {
    /// Records fault `id` as in force, healed by `heal`; a fault already open keeps its heal.
    pub fn open(&mut self, id: usize, heal: Box<dyn Heal>) {
        self.open.entry(id).or_insert(heal);
    }

    /// Ends fault `id`: its heal, if it is in force.
    pub fn close(&mut self, id: usize) -> Option<Box<dyn Heal>> {
        self.open.remove(&id)
    }

    /// Every fault still in force, in the order they opened.
    pub fn take_all(&mut self) -> Vec<Box<dyn Heal>> {
        std::mem::take(&mut self.open).into_values().collect()
    }
}

/// A step at a time, in milliseconds from the start of the workload.
#[derive(Debug, Clone)]
pub struct Step {
    pub at_ms: u64,
    pub action: Arc<dyn StepAction>,
}

impl Step {
    /// The action as `schedule.json` holds it: `{tag: {fields}}`.
    pub fn action_json(&self) -> serde_json::Value {
        serde_json::to_value(ActionJson(self.action.as_ref())).expect("a step serializes")
    }
}

impl PartialEq for Step {
    fn eq(&self, other: &Step) -> bool {
        self.at_ms == other.at_ms && self.action_json() == other.action_json()
    }
}

impl Serialize for Step {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Step", 2)?;
        st.serialize_field("at_ms", &self.at_ms)?;
        st.serialize_field("action", &ActionJson(self.action.as_ref()))?;
        st.end()
    }
}

/// An action written as an externally tagged enum variant with named fields.
struct ActionJson<'a>(&'a dyn StepAction);

impl Serialize for ActionJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry(self.0.tag(), &Fields(self.0.fields()))?;
        map.end()
    }
}

struct Fields(Vec<(&'static str, serde_json::Value)>);

impl Serialize for Fields {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// A field value for [`StepAction::fields`].
pub(crate) fn json(value: impl Serialize) -> serde_json::Value {
    serde_json::to_value(value).expect("a step field serializes")
}
