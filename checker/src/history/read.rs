//! Reading a `history.jsonl` file line by line, in constant memory: each line is checked
//! (UTF-8, JSON, every field's type, version, index without gaps, time never decreasing, one
//! operation in flight per process) and handed out without copying its strings.
//!
//! A last line with no newline is either a complete event (read: only the newline is missing)
//! or an event cut off mid-write (the run was killed while writing it): it is reported as
//! [`TornLine`], never as bad input, and every line before it is still evidence.

use super::diagnose::diagnose;
use super::error::{LineProblem, ReadError};
use super::event::{Event, EventRef, FORMAT_VERSION};
use super::rules::ProcessRules;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// A last line cut off mid-write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TornLine {
    /// From 1.
    pub line: usize,
    /// Byte offset of the line in the file.
    pub offset: u64,
    /// Bytes the line has.
    pub len: usize,
}

impl fmt::Display for TornLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {} (byte {}, {} bytes, no newline) is incomplete: the run was interrupted while writing it; it is left out and every line before it is read",
            self.line, self.offset, self.len
        )
    }
}

/// A history read line by line. Call [`HistoryReader::next_event`] until it gives `None`.
pub struct HistoryReader<R> {
    path: PathBuf,
    input: R,
    buf: Vec<u8>,
    /// Lines read so far.
    line: usize,
    /// Byte offset of the next line.
    offset: u64,
    next_index: u64,
    last_time: Option<(u64, usize)>,
    rules: ProcessRules,
    torn: Option<TornLine>,
}

impl HistoryReader<BufReader<File>> {
    /// Opens a history file.
    pub fn open(path: &Path) -> Result<Self, ReadError> {
        let file = File::open(path).map_err(|source| ReadError::Io {
            path: path.to_owned(),
            source,
        })?;
        Ok(HistoryReader::new(
            path,
            BufReader::with_capacity(1 << 20, file),
        ))
    }
}

impl<R: BufRead> HistoryReader<R> {
    /// Reads a history from `input`; `path` names it in errors.
    pub fn new(path: &Path, input: R) -> Self {
        HistoryReader {
            path: path.to_owned(),
            input,
            buf: Vec::with_capacity(512),
            line: 0,
            offset: 0,
            next_index: 0,
            last_time: None,
            rules: ProcessRules::default(),
            torn: None,
        }
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Events read so far.
    pub fn events(&self) -> u64 {
        self.next_index
    }

    /// The torn last line, once the end is reached.
    pub fn torn(&self) -> Option<TornLine> {
        self.torn
    }

    fn fail(&self, problem: LineProblem) -> ReadError {
        ReadError::Line {
            path: self.path.clone(),
            line: self.line,
            problem,
        }
    }

    /// The next event, `None` at the end of the file.
    pub fn next_event(&mut self) -> Result<Option<EventRef<'_>>, ReadError> {
        // Find the next line that is not blank.
        let (start, whole) = loop {
            self.buf.clear();
            let start = self.offset;
            let n = self
                .input
                .read_until(b'\n', &mut self.buf)
                .map_err(|source| ReadError::Io {
                    path: self.path.clone(),
                    source,
                })?;
            if n == 0 {
                return Ok(None);
            }
            self.line += 1;
            self.offset += n as u64;
            if !self.buf.iter().all(u8::is_ascii_whitespace) {
                break (start, self.buf.last() == Some(&b'\n'));
            }
        };
        let torn = TornLine {
            line: self.line,
            offset: start,
            len: self.buf.len(),
        };
        let text = match std::str::from_utf8(&self.buf) {
            Ok(t) => t,
            // A multi-byte character cut at the very end of an unfinished last line.
            Err(e) if !whole && e.error_len().is_none() => {
                self.torn = Some(torn);
                return Ok(None);
            }
            Err(e) => {
                return Err(self.fail(LineProblem::Utf8 {
                    offset: start + e.valid_up_to() as u64,
                    column: e.valid_up_to() + 1,
                }))
            }
        };
        let event: EventRef<'_> = match serde_json::from_str(text) {
            Ok(e) => e,
            Err(e) if !whole && e.classify() == serde_json::error::Category::Eof => {
                self.torn = Some(torn);
                return Ok(None);
            }
            Err(e) => {
                let problem = diagnose(text, &e);
                return Err(ReadError::Line {
                    path: self.path.clone(),
                    line: self.line,
                    problem,
                });
            }
        };
        let line = self.line;
        let fail = |problem| ReadError::Line {
            path: self.path.clone(),
            line,
            problem,
        };
        if event.v > FORMAT_VERSION {
            return Err(fail(LineProblem::TooNew { found: event.v }));
        }
        if event.index != self.next_index {
            return Err(fail(LineProblem::Gap {
                expected: self.next_index,
                found: event.index,
            }));
        }
        if let Some((previous, previous_line)) = self.last_time {
            if event.time_ns < previous {
                return Err(fail(LineProblem::TimeBackwards {
                    found: event.time_ns,
                    previous,
                    previous_line,
                }));
            }
        }
        if let Err(rule) = self.rules.check(&event, line) {
            return Err(fail(LineProblem::Process(rule)));
        }
        self.last_time = Some((event.time_ns, line));
        self.next_index += 1;
        Ok(Some(event))
    }
}

/// Reads a whole history file into memory. A torn last line is left out (see the module
/// documentation); use [`HistoryReader`] to learn about it, or to read in constant memory.
pub fn read_history(path: &Path) -> Result<Vec<Event>, ReadError> {
    collect(HistoryReader::open(path)?)
}

/// Parses the text of a history file (see [`read_history`]); errors name the line only.
pub fn parse_history(text: &str) -> Result<Vec<Event>, ReadError> {
    collect(HistoryReader::new(Path::new(""), text.as_bytes()))
}

fn collect<R: BufRead>(mut reader: HistoryReader<R>) -> Result<Vec<Event>, ReadError> {
    let mut events = Vec::new();
    while let Some(e) = reader.next_event()? {
        events.push(e.to_owned());
    }
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str =
        r#"{"v":1,"index":0,"time_ns":1,"process":0,"type":"invoke","f":"acquire","lock":"l"}"#;
    const B: &str = r#"{"v":1,"index":1,"time_ns":2,"process":0,"type":"ok","f":"acquire","lock":"l","value":{"token":1}}"#;

    fn err(text: &str) -> String {
        parse_history(text).unwrap_err().to_string()
    }

    #[test]
    fn torn_last_line_is_left_out_and_reported() {
        let text = format!("{A}\n{B}\n{{\"v\":1,\"ind");
        assert_eq!(parse_history(&text).unwrap().len(), 2);
        let mut r = HistoryReader::new(Path::new("h.jsonl"), text.as_bytes());
        while r.next_event().unwrap().is_some() {}
        let torn = r.torn().expect("torn line reported");
        assert_eq!(
            (torn.line, torn.offset),
            (3, (A.len() + B.len() + 2) as u64)
        );
        assert!(
            torn.to_string().contains("interrupted while writing"),
            "{torn}"
        );
    }

    #[test]
    fn complete_last_line_without_newline_is_read() {
        let text = format!("{A}\n{B}");
        assert_eq!(parse_history(&text).unwrap().len(), 2);
        let mut r = HistoryReader::new(Path::new("h.jsonl"), text.as_bytes());
        while r.next_event().unwrap().is_some() {}
        assert_eq!(r.torn(), None);
    }

    #[test]
    fn complete_but_invalid_last_line_without_newline_is_an_error_not_a_torn_line() {
        // Before, this was dropped as torn and the history read as 0 events.
        let text = A.replace("\"invoke\"", "\"begin\"");
        let e = err(&text);
        assert!(e.starts_with("read history line 1: field `type`"), "{e}");
        assert!(e.contains("allowed: invoke, ok, fail, info"), "{e}");
    }

    #[test]
    fn bad_line_in_the_middle_names_file_line_field_and_what_is_allowed() {
        let e = err(&format!("{A}\nnot json\n{B}\n"));
        assert!(
            e.starts_with("read history line 2: not a JSON object"),
            "{e}"
        );
        let bad = B.replace("\"token\":1", "\"token\":-1");
        let e = err(&format!("{A}\n{bad}\n"));
        assert!(e.contains("line 2: field `value.token`"), "{e}");
        assert!(e.contains("allowed: an integer from 0"), "{e}");
        let e = err(&format!("{}\n", A.replace("\"f\":\"acquire\",", "")));
        assert!(
            e.contains("line 1: field `f`: missing; allowed: acquire, release"),
            "{e}"
        );
    }

    #[test]
    fn invalid_utf8_names_line_and_byte_offset() {
        let mut bytes = format!("{A}\n").into_bytes();
        let line2 = B.replace("\"l\"", "\"l\u{e9}\"").into_bytes();
        let at = line2.iter().position(|&b| b == 0xc3).unwrap();
        let mut line2 = line2;
        line2[at] = 0xff;
        bytes.extend(&line2);
        bytes.push(b'\n');
        let mut r = HistoryReader::new(Path::new("h.jsonl"), &bytes[..]);
        r.next_event().unwrap();
        let e = r.next_event().unwrap_err().to_string();
        let offset = A.len() + 1 + at;
        assert!(
            e.starts_with(&format!(
                "read history h.jsonl line 2: byte {offset} of the file (byte {} of the line) is not valid UTF-8",
                at + 1
            )),
            "{e}"
        );
    }

    #[test]
    fn newer_version_is_rejected() {
        let e = err(&(A.replace("\"v\":1", "\"v\":99") + "\n"));
        assert!(e.contains("version 99"), "{e}");
    }

    #[test]
    fn index_gap_is_rejected() {
        let e = err(&format!("{B}\n"));
        assert!(
            e.contains("line 1: field `index`: 1 where 0 was expected"),
            "{e}"
        );
    }

    #[test]
    fn time_going_backwards_is_rejected() {
        let b = B.replace("\"time_ns\":2", "\"time_ns\":0");
        let e = err(&format!("{A}\n{b}\n"));
        assert!(
            e.contains("line 2: field `time_ns`: 0 is earlier than 1 on line 1"),
            "{e}"
        );
    }

    #[test]
    fn a_completion_without_its_invoke_is_rejected() {
        let b = B.replace("\"index\":1", "\"index\":0");
        let e = err(&format!("{b}\n"));
        assert!(
            e.contains("line 1: field `type`: process 0 has `ok` for acquire with no invoke"),
            "{e}"
        );
    }

    #[test]
    fn two_operations_in_flight_are_rejected_but_a_watchdog_renew_is_not() {
        let w =
            r#"{"v":1,"index":1,"time_ns":2,"process":0,"type":"invoke","f":"write","lock":"l"}"#;
        let e = err(&format!("{A}\n{w}\n"));
        assert!(
            e.contains("line 2: field `process`: process 0 invokes write while its acquire invoked on line 1 is still in flight"),
            "{e}"
        );
        let renew = w.replace("write", "renew");
        let done = B.replace("\"index\":1", "\"index\":2");
        assert_eq!(
            parse_history(&format!("{A}\n{renew}\n{done}\n"))
                .unwrap()
                .len(),
            3
        );
    }
}
