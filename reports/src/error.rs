//! Why a report could not be made.

use std::path::PathBuf;

/// Errors of this crate; messages read after "failed to …".
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("draw a chart: {0}")]
    Chart(String),
    #[error("render the {template} template: {source}")]
    Template {
        template: &'static str,
        source: minijinja::Error,
    },
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
