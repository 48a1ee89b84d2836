//! The on-disk history format (`history.jsonl`): one versioned JSON event per line, and its
//! line-by-line reader.

mod diagnose;
mod error;
mod event;
mod read;
mod rules;

pub use error::{LineProblem, ProcessRule, ReadError};
pub use event::{
    Event, EventKind, EventRef, Process, Value, ValueRef, F, FORMAT_VERSION, RUN_ENDED,
};
pub use read::{parse_history, read_history, HistoryReader, TornLine};
