//! Reading a history file in any supported format.

use super::error::ImportError;
use super::format::Format;
use super::{jepsen_edn, jepsen_log, lockpick, Imported};
use crate::lin_search::History;
use std::path::Path;

/// Reads and parses a history file; the format is detected when `format` is `None`.
pub fn read_file(path: &Path, format: Option<Format>) -> Result<History, ImportError> {
    read_file_lines(path, format).map(|i| i.history)
}

/// [`read_file`], keeping each operation's source line.
pub fn read_file_lines(path: &Path, format: Option<Format>) -> Result<Imported, ImportError> {
    let bytes = std::fs::read(path).map_err(|source| ImportError::Io {
        path: path.to_owned(),
        source,
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let line = 1 + e.as_bytes()[..offset]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        ImportError::Utf8 {
            path: path.to_owned(),
            line,
            offset,
        }
    })?;
    parse_text_lines(&text, format)
}

/// Parses history text; the format is detected when `format` is `None`.
pub fn parse_text(text: &str, format: Option<Format>) -> Result<History, ImportError> {
    parse_text_lines(text, format).map(|i| i.history)
}

/// [`parse_text`], keeping each operation's source line.
pub fn parse_text_lines(text: &str, format: Option<Format>) -> Result<Imported, ImportError> {
    match format.or_else(|| Format::detect(text)) {
        Some(Format::JepsenLog) => jepsen_log::parse(text),
        Some(Format::JepsenEdn) => jepsen_edn::parse(text),
        Some(Format::Lockpick) => {
            lockpick::from_events_lines(&crate::history::parse_history(text)?)
        }
        None => Err(ImportError::UnknownFormat),
    }
}
