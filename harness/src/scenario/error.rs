//! Scenario errors that name the file, the line, the field and what is allowed.

use std::fmt;
use std::path::PathBuf;

/// A scenario that cannot be used, located as precisely as the file allows.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("read scenario {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Invalid(Located),
    #[error("find scenario {name:?}: no such file and no scenario of that name; the scenarios are: {known}")]
    UnknownName { name: String, known: String },
}

/// An error at a place in a scenario file.
#[derive(Debug)]
pub struct Located {
    pub path: PathBuf,
    pub line: usize,
    pub field: String,
    pub message: String,
}

impl fmt::Display for Located {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "load scenario {}:{}: ", self.path.display(), self.line)?;
        if !self.field.is_empty() {
            write!(f, "field `{}`: ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

/// Turns byte offsets into line numbers and field names for error messages.
#[derive(Clone, Copy)]
pub(crate) struct Source<'a> {
    pub path: &'a std::path::Path,
    pub text: &'a str,
}

impl Source<'_> {
    /// 1-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text[..end].bytes().filter(|&b| b == b'\n').count() + 1
    }

    /// An error at `span` about `field`.
    pub fn error(
        &self,
        span: std::ops::Range<usize>,
        field: &str,
        message: impl Into<String>,
    ) -> ScenarioError {
        ScenarioError::Invalid(Located {
            path: self.path.to_owned(),
            line: self.line_of(span.start),
            field: field.to_owned(),
            message: message.into(),
        })
    }

    /// Converts a TOML/serde error; the field is taken from the `key =` on the error's line
    /// when the message does not name it already.
    pub fn toml_error(&self, err: &toml::de::Error) -> ScenarioError {
        let start = err.span().map(|s| s.start).unwrap_or(0);
        let line = self.line_of(start);
        let message = err.message().trim().to_owned();
        let field = if message.contains("field `") {
            String::new()
        } else {
            self.text
                .lines()
                .nth(line - 1)
                .and_then(|l| l.split_once('='))
                .map(|(k, _)| k.trim().to_owned())
                .filter(|k| !k.is_empty() && !k.starts_with('['))
                .unwrap_or_default()
        };
        ScenarioError::Invalid(Located {
            path: self.path.to_owned(),
            line,
            field,
            message,
        })
    }
}
