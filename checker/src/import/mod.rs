//! Importing histories (Jepsen logs, Jepsen EDN, lockpick JSONL) for the linearizability
//! checker, and exporting lockpick histories as Jepsen EDN.

pub mod edn;
mod error;
mod export_edn;
mod format;
mod jepsen_edn;
mod jepsen_log;
mod lockpick;
mod pair;
mod read;
mod value;

pub use error::ImportError;
pub use export_edn::to_jepsen_edn;
pub use format::{Format, UnknownFormat};
pub use lockpick::from_events;
pub use read::{parse_text, read_file};
