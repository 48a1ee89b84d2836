//! Why a server record could not be read: every error names the file and the line, and says
//! which field broke which rule and what is allowed (the history reader's style,
//! [`crate::history::ReadError`]).

use super::event::SERVER_RECORD_VERSION;
use std::path::{Path, PathBuf};

/// Why a server record could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ServerReadError {
    #[error("read server record {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("read server record {}line {line}: {problem}", named(path))]
    Line {
        path: PathBuf,
        /// From 1.
        line: usize,
        problem: RecordProblem,
    },
}

/// The file's name and a space, or nothing for a record given as text.
fn named(path: &Path) -> String {
    if path.as_os_str().is_empty() {
        String::new()
    } else {
        format!("{} ", path.display())
    }
}

impl ServerReadError {
    /// The line at fault, when the error is about one.
    pub fn line(&self) -> Option<usize> {
        match self {
            ServerReadError::Io { .. } => None,
            ServerReadError::Line { line, .. } => Some(*line),
        }
    }
}

/// What is wrong with one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordProblem {
    #[error("byte {offset} of the file (byte {column} of the line) is not valid UTF-8; a server record is UTF-8 text")]
    Utf8 { offset: u64, column: usize },
    #[error("not a JSON object ({message}); every line is one JSON server event object")]
    NotJson { message: String },
    #[error("field `{field}`: {message}; allowed: {allowed}")]
    Field {
        field: String,
        message: String,
        allowed: String,
    },
    #[error("field `v`: format version {found} is newer than {SERVER_RECORD_VERSION}, the newest this build reads; allowed: 1 to {SERVER_RECORD_VERSION}")]
    TooNew { found: u32 },
    #[error("field `index`: {found} where {expected} was expected; allowed: the line's position from 0, without gaps")]
    Gap { expected: u64, found: u64 },
    #[error("field `time_ns`: {found} is earlier than {previous} on line {previous_line}; allowed: a time that never decreases along the file")]
    TimeBackwards {
        found: u64,
        previous: u64,
        previous_line: usize,
    },
}

impl RecordProblem {
    pub(crate) fn field(name: &str, message: String, allowed: impl Into<String>) -> RecordProblem {
        RecordProblem::Field {
            field: name.to_string(),
            message,
            allowed: allowed.into(),
        }
    }
}
