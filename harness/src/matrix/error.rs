//! A matrix file that cannot be used: the error names the file, the line and the field, like
//! the scenario loader's.

use std::path::PathBuf;

/// A matrix file that cannot be used. Reads after "failed to".
#[derive(Debug, thiserror::Error)]
pub enum MatrixError {
    #[error("read matrix file {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("load matrix {path}:{line}: field `{field}`: {message}")]
    Invalid {
        path: PathBuf,
        line: usize,
        field: String,
        message: String,
    },
}
