//! Why a history file could not be imported.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("read history {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("read history {path}: line {line} is not valid UTF-8 (byte {offset} of the file)")]
    Utf8 {
        path: PathBuf,
        line: usize,
        offset: usize,
    },
    #[error("parse {format} history line {line}: {message}")]
    Parse {
        format: &'static str,
        line: usize,
        message: String,
    },
    #[error("parse lockpick history: {0}")]
    Lockpick(#[from] crate::history::ReadError),
    #[error("detect the history format: the first line that is not a `;` comment is neither a Jepsen log line, EDN (a map, vector, list or `#` form) nor a lockpick JSON event; name the format with --format")]
    UnknownFormat,
}
