//! Reading a history file in any supported format.

use super::error::ImportError;
use super::format::Format;
use super::{jepsen_edn, jepsen_log, lockpick};
use crate::lin::History;
use std::path::Path;

/// Reads and parses a history file; the format is detected when `format` is `None`.
pub fn read_file(path: &Path, format: Option<Format>) -> Result<History, ImportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ImportError::Io {
        path: path.to_owned(),
        source,
    })?;
    parse_text(&text, format)
}

/// Parses history text; the format is detected when `format` is `None`.
pub fn parse_text(text: &str, format: Option<Format>) -> Result<History, ImportError> {
    match format.or_else(|| Format::detect(text)) {
        Some(Format::JepsenLog) => jepsen_log::parse(text),
        Some(Format::JepsenEdn) => jepsen_edn::parse(text),
        Some(Format::Lockpick) => Ok(lockpick::from_events(&crate::history::parse_history(text)?)),
        None => Err(ImportError::UnknownFormat),
    }
}
