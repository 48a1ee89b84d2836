//! Scenario errors that name the file, the line, the field and what is allowed.

use std::fmt;
use std::path::PathBuf;
use toml::Spanned;

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
#[derive(Debug, Clone)]
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
            write!(f, "field `{}`: ", printable(&self.field))?;
        }
        f.write_str(&printable(&self.message))
    }
}

/// `text` on one line with no control characters: the TOML parser's messages span lines, and
/// a field name or value taken from the file could hold a terminal escape.
fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push_str("; ");
        }
        for c in line.chars() {
            if c.is_control() {
                out.extend(c.escape_default());
            } else {
                out.push(c);
            }
        }
    }
    out
}

/// Turns byte offsets into line numbers and field names for error messages.
#[derive(Clone)]
pub(crate) struct Source<'a> {
    pub path: &'a std::path::Path,
    pub text: &'a str,
    /// Byte offset where each line after the first starts, found once: every `[[nemesis]]`
    /// entry asks for its line, and counting newlines from the top each time made loading
    /// quadratic in the number of entries.
    line_starts: std::sync::Arc<[usize]>,
}

impl<'a> Source<'a> {
    pub fn new(path: &'a std::path::Path, text: &'a str) -> Source<'a> {
        let line_starts = text
            .bytes()
            .enumerate()
            .filter(|&(_, b)| b == b'\n')
            .map(|(i, _)| i + 1)
            .collect();
        Source {
            path,
            text,
            line_starts,
        }
    }

    /// 1-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        // Lines before `offset`'s: those whose start is at or before it.
        self.line_starts.partition_point(|&start| start <= offset) + 1
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

    /// Converts a TOML/serde error. The field is the key the message names (a missing or
    /// unknown field) or the key on the error's line, qualified by the table it is in
    /// (`workload.clients`, `nemesis.x`); on a line with no key, the table itself.
    pub fn toml_error(&self, err: &toml::de::Error) -> ScenarioError {
        let span = err.span().unwrap_or(0..0);
        let line = self.line_of(span.start);
        let message = err.message().trim();
        let message = if message.is_empty() {
            "not valid TOML here".to_owned()
        } else {
            message.to_owned()
        };
        let text_line = self.text.lines().nth(line - 1).unwrap_or("");
        // A missing field is reported over the table that lacks it: its header, or for the
        // top level an empty span or its first key.
        let top_level_missing = message.starts_with("missing field")
            && (span.is_empty() || !text_line.trim_start().starts_with('['));
        let table = if top_level_missing {
            None
        } else {
            self.table_at(line)
        };
        let named = message
            .split_once("field `")
            .and_then(|(_, rest)| rest.split_once('`'))
            .map(|(name, _)| name.to_owned());
        let key = named.or_else(|| {
            text_line
                .split_once('=')
                .map(|(k, _)| k.trim().trim_matches('"').to_owned())
                .filter(|k| !k.is_empty() && !k.starts_with('['))
        });
        let field = match (table, key) {
            // The key is the table's own header (`[nemesis]` where a list is expected).
            (Some(t), Some(k)) if t == k => t,
            (Some(t), Some(k)) => format!("{t}.{k}"),
            (Some(t), None) => t,
            (None, Some(k)) => k,
            (None, None) => "(top level)".to_owned(),
        };
        ScenarioError::Invalid(Located {
            path: self.path.to_owned(),
            line,
            field,
            message,
        })
    }

    /// The table (`[name]` or `[[name]]`) that `line` is in or heads, if any.
    fn table_at(&self, line: usize) -> Option<String> {
        self.text
            .lines()
            .take(line)
            .filter_map(|l| {
                let l = l.trim();
                let inner = l.strip_prefix('[')?;
                let inner = inner.strip_prefix('[').unwrap_or(inner);
                let name = inner.split(']').next().unwrap_or(inner).trim();
                (!name.is_empty()).then(|| name.trim_matches('"').to_owned())
            })
            .last()
    }
}

/// Checks `lo <= value <= hi`.
pub(crate) fn in_range(
    src: &Source,
    field: &str,
    value: &Spanned<u64>,
    lo: u64,
    hi: u64,
) -> Result<u64, ScenarioError> {
    let v = *value.get_ref();
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(src.error(
            value.span(),
            field,
            format!("{v} is out of range; allowed: {lo} to {hi}"),
        ))
    }
}
