//! Importing histories (Jepsen logs, Jepsen EDN, lockpick JSONL) for the linearizability
//! checker, and exporting lockpick histories as Jepsen EDN.

pub mod edn;
mod error;
mod export_edn;
mod format;
mod independent;
mod jepsen_edn;
mod jepsen_event;
mod jepsen_log;
mod jepsen_op;
mod lockpick;
mod pair;
mod read;
mod value;

pub use error::ImportError;
pub use export_edn::{to_jepsen_edn, to_jepsen_edn_exposed};
pub use format::{Format, UnknownFormat};
pub use lockpick::from_events;
pub use read::{parse_text, parse_text_lines, read_file, read_file_lines};

use crate::lin_search::History;

/// An imported history with the source line of each operation's invocation, so an error
/// about an operation can name the line a reader looks up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Imported {
    pub history: History,
    /// `lines[i]` is the line of `history.ops[i]`'s invocation.
    pub lines: Vec<usize>,
}
