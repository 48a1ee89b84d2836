//! `lockpick check` on hand-written histories with something wrong in them: every error names
//! the file, the line (and byte offset for bad UTF-8), the field and what is allowed; a torn
//! last line is reported as an interrupted write, not as bad input; and a history that breaks
//! the one-operation-per-process rule is refused, never silently trimmed.

mod cli_support;

use cli_support::both;
use std::path::Path;
use std::process::{Command, Output};

fn lockpick() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lockpick"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"));
    cmd
}

/// One event line: `process`, `type`, `f`, time in ms, extra `value` JSON (or "").
fn ev(index: u64, ms: u64, p: u64, kind: &str, f: &str, value: &str) -> String {
    let value = if value.is_empty() {
        String::new()
    } else {
        format!(r#","value":{{{value}}}"#)
    };
    format!(
        r#"{{"v":1,"index":{index},"time_ns":{},"process":{p},"type":"{kind}","f":"{f}","lock":"l"{value}}}"#,
        ms * 1_000_000
    )
}

/// A valid history: process 0 acquires, writes, releases.
fn valid_lines() -> Vec<String> {
    vec![
        ev(0, 1, 0, "invoke", "acquire", ""),
        ev(1, 2, 0, "ok", "acquire", r#""token":1"#),
        ev(2, 3, 0, "invoke", "write", r#""token":1"#),
        ev(3, 4, 0, "ok", "write", r#""token":1"#),
        ev(4, 5, 0, "invoke", "release", ""),
        ev(5, 6, 0, "ok", "release", ""),
    ]
}

/// Writes `bytes` as `bench.jsonl` (not `history.jsonl`, so no report is written) and runs
/// `check` (with `args`) on it.
fn check(dir: &Path, bytes: &[u8], args: &[&str]) -> (Output, String) {
    let path = dir.join("bench.jsonl");
    std::fs::write(&path, bytes).unwrap();
    let out = lockpick()
        .arg("check")
        .arg(&path)
        .args(args)
        .output()
        .unwrap();
    let text = both(&out);
    (out, text)
}

#[test]
fn a_torn_last_line_is_reported_as_an_interrupted_write_and_the_rest_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = valid_lines().join("\n") + "\n";
    text.push_str(r#"{"v":1,"index":6,"time_ns":7000000,"process":1,"ty"#);
    let (out, msg) = check(dir.path(), text.as_bytes(), &[]);
    assert_eq!(out.status.code(), Some(0), "{msg}");
    assert!(msg.contains("bench.jsonl: 6 events"), "{msg}");
    assert!(
        msg.contains("line 7 (byte ")
            && msg.contains("is incomplete: the run was interrupted while writing it"),
        "{msg}"
    );
}

#[test]
fn a_complete_last_line_without_a_newline_is_simply_read() {
    // Before, a file without a trailing newline could be read as "0 events" (exit 2).
    let dir = tempfile::tempdir().unwrap();
    let text = valid_lines().join("\n");
    let (out, msg) = check(dir.path(), text.as_bytes(), &[]);
    assert_eq!(out.status.code(), Some(0), "{msg}");
    assert!(msg.contains("bench.jsonl: 6 events"), "{msg}");
    assert!(!msg.contains("incomplete"), "{msg}");

    // A complete line that is not a valid event is bad input, not a torn write.
    let bad = valid_lines()[..5].join("\n") + "\n" + &ev(5, 6, 0, "ok", "unlock", "");
    let (out, msg) = check(dir.path(), bad.as_bytes(), &[]);
    assert_eq!(out.status.code(), Some(3), "{msg}");
    assert!(msg.contains("bench.jsonl line 6: field `f`"), "{msg}");
    assert!(msg.contains("allowed: acquire, release, renew"), "{msg}");
}

#[test]
fn a_parse_error_names_file_line_field_and_what_is_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = valid_lines();
    lines[3] = lines[3].replace(r#""token":1"#, r#""token":"one""#);
    let (out, msg) = check(dir.path(), (lines.join("\n") + "\n").as_bytes(), &[]);
    assert_eq!(out.status.code(), Some(3), "{msg}");
    assert!(
        msg.contains("bench.jsonl line 4: field `value.token`"),
        "{msg}"
    );
    assert!(msg.contains("allowed: an integer from 0"), "{msg}");
}

#[test]
fn invalid_utf8_names_file_line_and_byte_offset() {
    let dir = tempfile::tempdir().unwrap();
    let lines = valid_lines();
    let mut bytes = (lines[..2].join("\n") + "\n").into_bytes();
    let offset = bytes.len() + 10;
    let mut third = lines[2].clone().into_bytes();
    third[10] = 0xff;
    bytes.extend(third);
    bytes.push(b'\n');
    let (out, msg) = check(dir.path(), &bytes, &[]);
    assert_eq!(out.status.code(), Some(3), "{msg}");
    assert!(
        msg.contains(&format!(
            "bench.jsonl line 3: byte {offset} of the file (byte 11 of the line) is not valid UTF-8"
        )),
        "{msg}"
    );
}

#[test]
fn time_going_backwards_is_an_error_naming_both_lines() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = valid_lines();
    lines[4] = ev(4, 2, 0, "invoke", "release", "");
    let (out, msg) = check(dir.path(), (lines.join("\n") + "\n").as_bytes(), &[]);
    assert_eq!(out.status.code(), Some(3), "{msg}");
    assert!(
        msg.contains(
            "bench.jsonl line 5: field `time_ns`: 2000000 is earlier than 4000000 on line 4"
        ),
        "{msg}"
    );
}

/// Process 1's `acquire ok` with no invoke, while process 0 holds the lock: it proves a
/// double holder, and used to be dropped silently (both checks said valid).
fn orphan_ok_acquire() -> String {
    [
        ev(0, 1, 0, "invoke", "acquire", ""),
        ev(1, 2, 0, "ok", "acquire", r#""token":1"#),
        ev(2, 3, 1, "ok", "acquire", r#""token":2"#),
        ev(3, 5, 0, "invoke", "release", ""),
        ev(4, 6, 0, "ok", "release", ""),
    ]
    .join("\n")
        + "\n"
}

#[test]
fn an_ok_acquire_without_its_invoke_is_an_error_naming_the_line_in_both_checks() {
    let dir = tempfile::tempdir().unwrap();
    let (out, msg) = check(dir.path(), orphan_ok_acquire().as_bytes(), &[]);
    assert_eq!(out.status.code(), Some(3), "{msg}");
    assert!(
        msg.contains("bench.jsonl line 3: field `type`: process 1 has `ok` for acquire with no invoke of it in flight"),
        "{msg}"
    );
    let (out, msg) = check(
        dir.path(),
        orphan_ok_acquire().as_bytes(),
        &["--model", "mutex"],
    );
    assert_eq!(out.status.code(), Some(3), "{msg}");
    assert!(msg.contains("line 3:"), "{msg}");
    assert!(!msg.contains("VALID") && !msg.contains(": valid"), "{msg}");
}

#[test]
fn two_operations_in_flight_for_one_process_is_an_error_naming_both_lines() {
    // Process 1 invokes a second acquire while its first is in flight; the second is granted
    // while process 0 holds the lock. Pairing the first completion with the second invoke
    // used to hide the double holder.
    let dir = tempfile::tempdir().unwrap();
    let text = [
        ev(0, 1, 0, "invoke", "acquire", ""),
        ev(1, 2, 0, "ok", "acquire", r#""token":1"#),
        ev(2, 3, 1, "invoke", "acquire", ""),
        ev(3, 4, 1, "invoke", "acquire", ""),
        ev(4, 5, 1, "ok", "acquire", r#""token":2"#),
        ev(5, 6, 0, "invoke", "release", ""),
        ev(6, 7, 0, "ok", "release", ""),
    ]
    .join("\n")
        + "\n";
    let (out, msg) = check(dir.path(), text.as_bytes(), &[]);
    assert_eq!(out.status.code(), Some(3), "{msg}");
    assert!(
        msg.contains("bench.jsonl line 4: field `process`: process 1 invokes acquire while its acquire invoked on line 3 is still in flight"),
        "{msg}"
    );
}
