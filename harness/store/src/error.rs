//! Why a store record could not be read or written.

use std::path::PathBuf;

/// A record of the store that could not be read, parsed or written; messages read after
/// "failed to …".
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("parse {path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}
