//! Why a history could not be read: every error names the file and the line, and says which
//! field broke which rule and what is allowed.

use super::event::{Process, F, FORMAT_VERSION};
use std::fmt;
use std::path::PathBuf;

/// Why a history could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("read history {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("read history {}line {line}: {problem}", named(path))]
    Line {
        path: PathBuf,
        /// From 1.
        line: usize,
        problem: LineProblem,
    },
}

/// The file's name and a space, or nothing for a history given as text.
fn named(path: &std::path::Path) -> String {
    if path.as_os_str().is_empty() {
        String::new()
    } else {
        format!("{} ", path.display())
    }
}

impl ReadError {
    /// The line at fault, when the error is about one.
    pub fn line(&self) -> Option<usize> {
        match self {
            ReadError::Io { .. } => None,
            ReadError::Line { line, .. } => Some(*line),
        }
    }
}

/// What is wrong with one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineProblem {
    #[error("byte {offset} of the file (byte {column} of the line) is not valid UTF-8; a history is UTF-8 text")]
    Utf8 { offset: u64, column: usize },
    #[error("not a JSON object ({message}); every line is one JSON event object")]
    NotJson { message: String },
    #[error("field `{field}`: {message}; allowed: {allowed}")]
    Field {
        field: String,
        message: String,
        allowed: String,
    },
    #[error("field `v`: format version {found} is newer than {FORMAT_VERSION}, the newest this build reads; allowed: 1 to {FORMAT_VERSION}")]
    TooNew { found: u32 },
    #[error("field `index`: {found} where {expected} was expected; allowed: the line's position from 0, without gaps")]
    Gap { expected: u64, found: u64 },
    #[error("field `time_ns`: {found} is earlier than {previous} on line {previous_line}; allowed: a time that never decreases along the file")]
    TimeBackwards {
        found: u64,
        previous: u64,
        previous_line: usize,
    },
    #[error("{0}")]
    Process(ProcessRule),
}

/// A broken rule of how a client process's events follow each other: a process runs one
/// operation at a time (its lease watchdog's `renew` excepted), and every completion answers
/// the invocation in flight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessRule {
    /// An invoke while the process already had an operation in flight.
    TwoInFlight {
        process: Process,
        f: F,
        pending: F,
        pending_line: usize,
    },
    /// A completion with no invoke in flight.
    NoInvoke {
        process: Process,
        kind: &'static str,
        f: F,
    },
    /// A completion of another operation than the one in flight.
    OtherOp {
        process: Process,
        kind: &'static str,
        f: F,
        pending: F,
        pending_line: usize,
    },
}

impl fmt::Display for ProcessRule {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        const RULE: &str = "allowed: one operation in flight per process (plus a `renew` of its lease watchdog), each completion after its own invoke";
        match self {
            ProcessRule::TwoInFlight {
                process,
                f,
                pending,
                pending_line,
            } => write!(
                out,
                "field `process`: process {process} invokes {f} while its {pending} invoked on line {pending_line} is still in flight; {RULE}"
            ),
            ProcessRule::NoInvoke { process, kind, f } => write!(
                out,
                "field `type`: process {process} has `{kind}` for {f} with no invoke of it in flight; {RULE}"
            ),
            ProcessRule::OtherOp {
                process,
                kind,
                f,
                pending,
                pending_line,
            } => write!(
                out,
                "field `f`: process {process} has `{kind}` for {f} but its operation in flight is the {pending} invoked on line {pending_line}; {RULE}"
            ),
        }
    }
}
