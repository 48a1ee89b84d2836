//! Why a history does not fit a model.

use crate::lin::Op;

/// An operation the model cannot interpret.
#[derive(Debug, thiserror::Error)]
#[error("check operation {index} ({op}) with model {model}: {reason}")]
pub struct ModelError {
    pub model: &'static str,
    /// Position of the operation in the history.
    pub index: usize,
    pub op: String,
    pub reason: String,
}

impl ModelError {
    pub fn new(model: &'static str, index: usize, op: &Op, reason: impl Into<String>) -> Self {
        ModelError {
            model,
            index,
            op: op.to_string(),
            reason: reason.into(),
        }
    }
}
