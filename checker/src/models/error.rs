//! Why a history does not fit a model.

use crate::lin_search::Op;
use std::fmt;

/// An operation the model cannot interpret.
#[derive(Debug, thiserror::Error)]
pub struct ModelError {
    pub model: &'static str,
    /// Position of the operation in the history.
    pub index: usize,
    /// The operation's line in its file, when the history was read from one.
    pub line: Option<usize>,
    pub op: String,
    pub reason: String,
}

impl ModelError {
    pub fn new(model: &'static str, index: usize, op: &Op, reason: impl Into<String>) -> Self {
        ModelError {
            model,
            index,
            line: None,
            op: op.to_string(),
            reason: reason.into(),
        }
    }
}

/// Reads after "failed to …".
impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "check line {line}")?,
            None => write!(f, "check operation {}", self.index)?,
        }
        write!(
            f,
            " ({}) with model {}: {}",
            self.op, self.model, self.reason
        )
    }
}
