//! [`Model`]: what the linearizability checker asks of a sequential specification, and how a
//! model is named, printed and compared (by its name).

use super::error::ModelError;
use crate::lin_search::{Budget, History, LinReport, OpF};
use std::fmt;

/// A sequential specification a history can be checked against, listed in
/// [`super::MODELS`]. No method has a default: every model decides each of them.
pub trait Model: Sync {
    /// The name `check --model` takes and reports and errors print (`cas-register`).
    fn name(&self) -> &'static str;
    /// The operations the model checks.
    fn takes(&self) -> &'static [OpF];
    /// Operations the model leaves alone when they come beside some it takes: a lockpick
    /// history records the protected resource's reads and writes among the lock's operations,
    /// and those are the lock checks' (stale writes), not a lock model's. Empty when every
    /// operation must be one it takes.
    fn passes_over(&self) -> &'static [OpF];
    /// Splits `history` into the independent parts of the specification and checks them with
    /// [`crate::lin_search::check_parts`], naming this model. [`super::coverage`] has already refused
    /// an operation outside [`Model::takes`] and [`Model::passes_over`]; one whose argument or
    /// result the model cannot read is an error naming it.
    fn check(&self, history: &History, budget: &Budget) -> Result<LinReport, ModelError>;
}

impl fmt::Display for dyn Model + '_ {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Debug for dyn Model + '_ {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Model({})", self.name())
    }
}

/// Names are unique in [`super::MODELS`] (tested), so a name is the model.
impl PartialEq for dyn Model + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for dyn Model + '_ {}
