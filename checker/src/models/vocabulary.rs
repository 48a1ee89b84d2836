//! Which operations each model takes, so that a model never passes a history whose
//! operations it does not understand: an operation outside its vocabulary is an error that
//! names it, and so is a history in which it finds nothing to check.

use super::error::ModelError;
use super::model::Model;
use crate::lin_search::{History, OpF};

/// What the lock models take.
pub(super) const LOCK: &[OpF] = &[OpF::Acquire, OpF::Release, OpF::Renew];
/// What the lock models pass over: the protected resource's operations.
pub(super) const RESOURCE: &[OpF] = &[OpF::Read, OpF::Write];

/// The model's vocabulary as a sentence, for errors.
fn vocabulary(model: &dyn Model) -> String {
    let names = |fs: &[OpF]| fs.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ");
    let mut s = format!("the {model} model takes {}", names(model.takes()));
    if !model.passes_over().is_empty() {
        s.push_str(&format!(
            " (and passes over {} beside them)",
            names(model.passes_over())
        ));
    }
    s
}

/// How a history's operations fall for a model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Operations the model checks.
    pub checked: usize,
    /// Operations it passes over ([`Model::passes_over`]).
    pub passed_over: usize,
}

/// Sorts the history's operations for `model`: the first one outside its vocabulary is an
/// error, and so is a history with operations of which the model takes none (a register
/// history under a lock model would otherwise check nothing and pass).
pub fn coverage(model: &dyn Model, history: &History) -> Result<Coverage, ModelError> {
    let mut c = Coverage::default();
    for (i, op) in history.ops.iter().enumerate() {
        if model.takes().contains(&op.f) {
            c.checked += 1;
        } else if model.passes_over().contains(&op.f) {
            c.passed_over += 1;
        } else {
            return Err(ModelError::new(
                model.name(),
                i,
                op,
                format!(
                    "{} is not an operation of this model; {}",
                    op.f,
                    vocabulary(model)
                ),
            ));
        }
    }
    if c.checked == 0 && !history.ops.is_empty() {
        return Err(ModelError::new(
            model.name(),
            0,
            &history.ops[0],
            format!(
                "none of the history's {} operations is one the model checks, so it would test nothing; {}",
                history.ops.len(),
                vocabulary(model)
            ),
        ));
    }
    Ok(c)
}
