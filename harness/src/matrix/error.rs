//! A matrix file that cannot be used: the error names the file, the line and the field, like
//! the scenario loader's.

use crate::scenario::Source;
use std::ops::Range;
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

impl MatrixError {
    /// The error at `span` of the matrix file `src`: its path, the span's line, `field` and
    /// `message`.
    pub(super) fn at(src: &Source, span: Range<usize>, field: &str, message: String) -> Self {
        MatrixError::Invalid {
            path: src.path.to_owned(),
            line: src.line_of(span.start),
            field: field.to_owned(),
            message,
        }
    }

    /// A file without a `[[table]]` entry, which it needs at least one of: at its first line.
    pub(super) fn none_given(src: &Source, table: &str) -> Self {
        MatrixError::at(
            src,
            0..0,
            table,
            format!("no [[{table}]]; give at least one"),
        )
    }
}
