//! Reading a `server.jsonl` file line by line: each line is checked (UTF-8, JSON, every
//! field's type and no unknown field, version, index without gaps, time never decreasing, a
//! `set` names its value, a `reset` is of key `*`). The whole record is kept: the checker
//! sets it beside the history, and it is one line per change of a lock's record, far smaller
//! than the history.
//!
//! A last line with no newline is either a complete event (read: only the newline is missing)
//! or an event cut off mid-write (the run was killed while writing it): it is reported as a
//! [`TornLine`] and left out, as the history reader does, and every line before it is read.

use super::diagnose::diagnose;
use super::error::{RecordProblem, ServerReadError};
use super::event::{
    RecordChange, ServerEvent, RESET_KEY, SERVER_RECORD_FILE, SERVER_RECORD_VERSION,
};
use crate::history::TornLine;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// A server record read whole.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerRecord {
    /// Its events, in file order.
    pub events: Vec<ServerEvent>,
    /// A last line cut off mid-write, left out.
    pub torn: Option<TornLine>,
}

/// Reads a server record file.
pub fn read_server_record(path: &Path) -> Result<ServerRecord, ServerReadError> {
    let file = File::open(path).map_err(|source| ServerReadError::Io {
        path: path.to_owned(),
        source,
    })?;
    read(path, BufReader::new(file))
}

/// The server record of the run folder `dir` (its [`SERVER_RECORD_FILE`], beside
/// `history.jsonl`), or `None` when it has none: a run without one is checked as it always
/// was.
pub fn read_server_record_in(dir: &Path) -> Result<Option<ServerRecord>, ServerReadError> {
    let path = dir.join(SERVER_RECORD_FILE);
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(None);
    }
    read_server_record(&path).map(Some)
}

/// Parses the text of a server record (see [`read_server_record`]); errors name the line only.
pub fn parse_server_record(text: &str) -> Result<ServerRecord, ServerReadError> {
    read(Path::new(""), text.as_bytes())
}

fn read<R: BufRead>(path: &Path, mut input: R) -> Result<ServerRecord, ServerReadError> {
    let mut record = ServerRecord::default();
    let mut buf = Vec::with_capacity(256);
    let (mut line, mut offset) = (0usize, 0u64);
    let mut last_time: Option<(u64, usize)> = None;
    loop {
        buf.clear();
        let start = offset;
        let n = input
            .read_until(b'\n', &mut buf)
            .map_err(|source| ServerReadError::Io {
                path: path.to_owned(),
                source,
            })?;
        if n == 0 {
            return Ok(record);
        }
        line += 1;
        offset += n as u64;
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let fail = |problem| ServerReadError::Line {
            path: path.to_owned(),
            line,
            problem,
        };
        let whole = buf.last() == Some(&b'\n');
        let torn = TornLine {
            line,
            offset: start,
            len: buf.len(),
        };
        let text = match std::str::from_utf8(&buf) {
            Ok(t) => t,
            // A multi-byte character cut at the very end of an unfinished last line.
            Err(e) if !whole && e.error_len().is_none() => {
                record.torn = Some(torn);
                return Ok(record);
            }
            Err(e) => {
                return Err(fail(RecordProblem::Utf8 {
                    offset: start + e.valid_up_to() as u64,
                    column: e.valid_up_to() + 1,
                }))
            }
        };
        let event: ServerEvent = match serde_json::from_str(text) {
            Ok(e) => e,
            Err(e) if !whole && e.classify() == serde_json::error::Category::Eof => {
                record.torn = Some(torn);
                return Ok(record);
            }
            Err(e) => return Err(fail(diagnose(text, &e))),
        };
        check(&event, record.events.len() as u64, last_time).map_err(fail)?;
        last_time = Some((event.time_ns, line));
        record.events.push(event);
    }
}

/// The rules of one line that its types do not say, given the index it must have and the
/// time (and line) of the event before it.
fn check(e: &ServerEvent, index: u64, last: Option<(u64, usize)>) -> Result<(), RecordProblem> {
    if e.v > SERVER_RECORD_VERSION {
        return Err(RecordProblem::TooNew { found: e.v });
    }
    if e.v == 0 {
        return Err(RecordProblem::field(
            "v",
            "0 is no version".into(),
            format!("an integer from 1 to {SERVER_RECORD_VERSION}"),
        ));
    }
    if e.index != index {
        return Err(RecordProblem::Gap {
            expected: index,
            found: e.index,
        });
    }
    if let Some((previous, previous_line)) = last.filter(|(t, _)| e.time_ns < *t) {
        return Err(RecordProblem::TimeBackwards {
            found: e.time_ns,
            previous,
            previous_line,
        });
    }
    if e.node.is_empty() {
        return Err(RecordProblem::field(
            "node",
            "empty".into(),
            "a node name (n1, n2, …)",
        ));
    }
    match e.event {
        RecordChange::Reset if e.key != RESET_KEY => Err(RecordProblem::field(
            "key",
            format!("{:?} on a `reset`", e.key),
            "\"*\" on a reset: the node lost every record",
        )),
        RecordChange::Set
        | RecordChange::Renewed
        | RecordChange::Expired
        | RecordChange::Deleted
            if e.key.is_empty() || e.key == RESET_KEY =>
        {
            Err(RecordProblem::field(
                "key",
                format!("{:?} on a `{}`", e.key, e.event.name()),
                "the record's name on the server; \"*\" only on a reset",
            ))
        }
        RecordChange::Set if e.value.is_none() => Err(RecordProblem::field(
            "value",
            "missing on a `set`".into(),
            "the owner as the server stores it (a string): a set says whose the record now is",
        )),
        RecordChange::Set
        | RecordChange::Renewed
        | RecordChange::Expired
        | RecordChange::Deleted
        | RecordChange::Reset => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = r#"{"v":1,"index":0,"time_ns":10,"node":"n1","key":"lockpick:l","event":"set","value":"0-ab","ttl_ms":300}"#;
    const B: &str =
        r#"{"v":1,"index":1,"time_ns":20,"node":"n1","key":"lockpick:l","event":"expired"}"#;

    fn err(text: &str) -> String {
        parse_server_record(text).unwrap_err().to_string()
    }

    #[test]
    fn a_good_record_reads_and_blank_lines_are_skipped() {
        let r = parse_server_record(&format!("{A}\n\n{B}\n")).unwrap();
        assert_eq!(r.events.len(), 2);
        assert_eq!(r.events[1].event, RecordChange::Expired);
        assert_eq!(r.torn, None);
    }

    #[test]
    fn torn_last_line_is_left_out_and_reported() {
        let r = parse_server_record(&format!("{A}\n{B}\n{{\"v\":1,\"ind")).unwrap();
        assert_eq!(r.events.len(), 2);
        let torn = r.torn.expect("torn line reported");
        assert_eq!(
            (torn.line, torn.offset),
            (3, (A.len() + B.len() + 2) as u64)
        );
        // A complete last line with no newline is simply read.
        let r = parse_server_record(&format!("{A}\n{B}")).unwrap();
        assert_eq!((r.events.len(), r.torn), (2, None));
        // One that is complete JSON but not a valid event is an error like any other line.
        let e = err(&format!("{A}\n{}", B.replace("expired", "gone")));
        assert!(
            e.starts_with("read server record line 2: field `event`"),
            "{e}"
        );
    }

    #[test]
    fn a_bad_line_names_the_file_the_line_the_field_and_what_is_allowed() {
        let e = err(&format!("{A}\nnot json\n"));
        assert!(
            e.starts_with("read server record line 2: not a JSON object"),
            "{e}"
        );
        let e = err(&format!("{}\n", B.replace("expired", "vanished")));
        assert!(e.contains("line 1: field `event`"), "{e}");
        assert!(
            e.contains("allowed: set, renewed, expired, deleted, reset"),
            "{e}"
        );
        let e = err(&format!(
            "{}\n",
            A.replace("\"ttl_ms\":300", "\"ttl_ms\":-1")
        ));
        assert!(e.contains("field `ttl_ms`"), "{e}");
        assert!(e.contains("allowed: an integer from 0"), "{e}");
        let e = err(&format!("{}\n", A.replace("\"node\":\"n1\",", "")));
        assert!(
            e.contains("field `node`: missing; allowed: a node name"),
            "{e}"
        );
        let e = err(&format!("{}\n", A.replace("\"ttl_ms\"", "\"ttl\"")));
        assert!(
            e.contains("field `ttl`: not a field of the server record; allowed: the fields v, index, time_ns, node, key, event, value, ttl_ms"),
            "{e}"
        );
        let e = read(
            Path::new("run/server.jsonl"),
            format!("{A}\n{{}}\n").as_bytes(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("read server record run/server.jsonl line 2: field `v`: missing"),
            "{e}"
        );
    }

    #[test]
    fn a_set_names_its_value_and_a_reset_is_of_every_key() {
        let e = err(&format!("{}\n", A.replace(",\"value\":\"0-ab\"", "")));
        assert!(
            e.contains("line 1: field `value`: missing on a `set`"),
            "{e}"
        );
        let reset = B.replace("\"expired\"", "\"reset\"");
        let e = err(&format!("{A}\n{reset}\n"));
        assert!(
            e.contains("line 2: field `key`: \"lockpick:l\" on a `reset`; allowed: \"*\""),
            "{e}"
        );
        let ok = reset.replace("lockpick:l", "*");
        assert_eq!(
            parse_server_record(&format!("{A}\n{ok}\n"))
                .unwrap()
                .events
                .len(),
            2
        );
        let e = err(&format!("{A}\n{}\n", B.replace("lockpick:l", "*")));
        assert!(e.contains("field `key`: \"*\" on a `expired`"), "{e}");
        let e = err(&format!("{}\n", A.replace("\"n1\"", "\"\"")));
        assert!(e.contains("field `node`: empty"), "{e}");
    }

    #[test]
    fn a_newer_or_zero_version_is_refused() {
        let e = err(&format!("{}\n", A.replace("\"v\":1", "\"v\":2")));
        assert!(
            e.contains("format version 2 is newer than 1, the newest this build reads"),
            "{e}"
        );
        let e = err(&format!("{}\n", A.replace("\"v\":1", "\"v\":0")));
        assert!(e.contains("field `v`: 0 is no version"), "{e}");
    }

    #[test]
    fn an_index_gap_and_time_going_backwards_are_refused() {
        let e = err(&format!("{B}\n"));
        assert!(
            e.contains("line 1: field `index`: 1 where 0 was expected"),
            "{e}"
        );
        let b = B.replace("\"time_ns\":20", "\"time_ns\":5");
        let e = err(&format!("{A}\n{b}\n"));
        assert!(
            e.contains("line 2: field `time_ns`: 5 is earlier than 10 on line 1"),
            "{e}"
        );
    }

    #[test]
    fn invalid_utf8_names_the_byte() {
        let mut bytes = format!("{A}\n").into_bytes();
        let mut line2 = B.as_bytes().to_vec();
        line2[5] = 0xff;
        bytes.extend(&line2);
        bytes.push(b'\n');
        let e = read(Path::new("s.jsonl"), &bytes[..])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!(
                "read server record s.jsonl line 2: byte {} of the file (byte 6 of the line) is not valid UTF-8",
                A.len() + 1 + 5
            )),
            "{e}"
        );
    }
}
