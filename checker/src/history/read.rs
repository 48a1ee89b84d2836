//! Reading a `history.jsonl` file back, tolerating a torn last line from a crashed run.

use super::event::{Event, FORMAT_VERSION};
use std::path::{Path, PathBuf};

/// Why a history could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("read history {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("parse history line {line}: {message}")]
    Parse { line: usize, message: String },
    #[error("read history line {line}: format version {found} is newer than {FORMAT_VERSION}, the newest this build reads")]
    TooNew { line: usize, found: u32 },
    #[error("read history line {line}: index {found} where {expected} was expected")]
    Gap {
        line: usize,
        expected: u64,
        found: u64,
    },
}

/// Reads a history file. A last line without a newline that does not parse is dropped: it is
/// what a run killed in the middle of a write leaves behind, and every complete line before it
/// is still evidence.
pub fn read_history(path: &Path) -> Result<Vec<Event>, ReadError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReadError::Io {
        path: path.to_owned(),
        source,
    })?;
    parse_history(&text)
}

/// Parses the text of a history file (see [`read_history`]).
pub fn parse_history(text: &str) -> Result<Vec<Event>, ReadError> {
    let torn_tail = !text.is_empty() && !text.ends_with('\n');
    let lines: Vec<&str> = text.lines().collect();
    let mut events = Vec::with_capacity(lines.len());
    for (i, raw) in lines.iter().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let event: Event = match serde_json::from_str(raw) {
            Ok(e) => e,
            Err(_) if torn_tail && i + 1 == lines.len() => break,
            Err(e) => {
                return Err(ReadError::Parse {
                    line,
                    message: e.to_string(),
                })
            }
        };
        if event.v > FORMAT_VERSION {
            return Err(ReadError::TooNew {
                line,
                found: event.v,
            });
        }
        let expected = events.len() as u64;
        if event.index != expected {
            return Err(ReadError::Gap {
                line,
                expected,
                found: event.index,
            });
        }
        events.push(event);
    }
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = r#"{"v":1,"index":0,"time_ns":1,"process":0,"type":"invoke","f":"acquire","lock":"l"}"#;
    const B: &str = r#"{"v":1,"index":1,"time_ns":2,"process":0,"type":"ok","f":"acquire","lock":"l","value":{"token":1}}"#;

    #[test]
    fn torn_last_line_is_dropped() {
        let text = format!("{A}\n{B}\n{{\"v\":1,\"ind");
        assert_eq!(parse_history(&text).unwrap().len(), 2);
    }

    #[test]
    fn bad_line_in_the_middle_names_its_line() {
        let text = format!("{A}\nnot json\n{B}\n");
        let err = parse_history(&text).unwrap_err().to_string();
        assert!(err.starts_with("parse history line 2:"), "{err}");
    }

    #[test]
    fn newer_version_is_rejected() {
        let text = A.replace("\"v\":1", "\"v\":99") + "\n";
        let err = parse_history(&text).unwrap_err().to_string();
        assert!(err.contains("version 99"), "{err}");
    }

    #[test]
    fn index_gap_is_rejected() {
        let text = format!("{B}\n");
        assert!(matches!(
            parse_history(&text),
            Err(ReadError::Gap { expected: 0, found: 1, .. })
        ));
    }
}
