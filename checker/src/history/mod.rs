//! The on-disk history format (`history.jsonl`): one versioned JSON event per line.

mod event;
mod read;

pub use event::{Event, EventKind, Process, Value, F, FORMAT_VERSION};
pub use read::{parse_history, read_history, ReadError};
