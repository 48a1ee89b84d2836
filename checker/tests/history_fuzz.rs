//! Fuzzing the lockpick history reader and the checks behind it, for a bounded number of
//! cases so it runs in CI in seconds: arbitrary bytes and mutated valid histories never panic
//! and always give either a verdict or an error that names the file and the line.

#[path = "../benches/support/generate.rs"]
#[allow(dead_code)]
mod generate;

use lockpick_checker::history::{HistoryReader, ReadError};
use lockpick_checker::lock::{LockCheckParams, Property};
use lockpick_checker::run_checks::check_run_reader;
use proptest::prelude::*;
use std::path::Path;

/// A valid history: 3 processes taking turns on 2 locks, with a pause fault and a crash.
fn valid() -> Vec<u8> {
    let mut out = Vec::new();
    generate::write_history(
        generate::Shape {
            processes: 4,
            locks: 2,
            events: 40,
        },
        &mut out,
    )
    .unwrap();
    let text = String::from_utf8(out).unwrap();
    let n = text.lines().count();
    let t = 1000 * (n as u64 + 1);
    let mut text = text;
    text.push_str(&format!(
        "{{\"v\":1,\"index\":{n},\"time_ns\":{t},\"process\":\"nemesis\",\"type\":\"info\",\"f\":\"pause\",\"value\":{{\"client\":1,\"ms\":5}}}}\n{{\"v\":1,\"index\":{},\"time_ns\":{},\"process\":\"nemesis\",\"type\":\"info\",\"f\":\"crash\",\"value\":{{\"client\":2}}}}\n",
        n + 1,
        t + 1
    ));
    text.into_bytes()
}

/// Checks `bytes` as a history file: a verdict, or an error naming the file and a line.
fn check_bytes(bytes: &[u8]) -> Result<(), TestCaseError> {
    for property in [Property::Exclusive, Property::Fenced] {
        let reader = HistoryReader::new(Path::new("fuzz.jsonl"), bytes);
        let params = LockCheckParams {
            property,
            deadlock_ms: 1,
        };
        match check_run_reader(reader, &params) {
            Ok(found) => {
                // A report that prints, and a verdict.
                let _ = found.checks.lock.to_string();
                let _ = found.checks.verdict();
            }
            Err(e @ ReadError::Line { .. }) => {
                let msg = e.to_string();
                prop_assert!(
                    msg.starts_with("read history fuzz.jsonl line "),
                    "error without file and line: {msg}"
                );
            }
            Err(e) => return Err(TestCaseError::fail(format!("unexpected error: {e}"))),
        }
    }
    Ok(())
}

#[derive(Debug, Clone)]
enum Mutation {
    /// Delete `len` bytes at `at` (both taken modulo the length).
    Delete { at: usize, len: usize },
    /// Insert bytes at `at`.
    Insert { at: usize, bytes: Vec<u8> },
    /// Overwrite one byte.
    Set { at: usize, byte: u8 },
    /// Swap two lines.
    SwapLines { a: usize, b: usize },
    /// Repeat a line.
    DupLine { at: usize },
    /// Cut the file short.
    Truncate { at: usize },
    /// Replace one word the format knows by another.
    Word { at: usize, with: usize },
}

const WORDS: &[&str] = &[
    "invoke",
    "ok",
    "fail",
    "info",
    "acquire",
    "release",
    "write",
    "renew",
    "read",
    "nemesis",
    "token",
    "max_token",
    "lock-0",
    "lock-1",
    "1",
    "0",
    "-1",
    "null",
    "\"\"",
    "{}",
    "[]",
    "18446744073709551616",
    "time_ns",
    "index",
    "process",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1..40usize).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Set { at, byte }),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines { a, b }),
        any::<usize>().prop_map(|at| Mutation::DupLine { at }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
        (any::<usize>(), any::<usize>()).prop_map(|(at, with)| Mutation::Word { at, with }),
    ]
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    let n = bytes.len().max(1);
    match m {
        Mutation::Delete { at, len } => {
            let at = at % n;
            let end = (at + len).min(bytes.len());
            bytes.drain(at.min(end)..end);
        }
        Mutation::Insert { at, bytes: b } => {
            let at = at % (bytes.len() + 1);
            bytes.splice(at..at, b.iter().copied());
        }
        Mutation::Set { at, byte } => {
            if !bytes.is_empty() {
                bytes[at % n] = *byte;
            }
        }
        Mutation::SwapLines { a, b } => {
            let mut lines: Vec<Vec<u8>> =
                bytes.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect();
            let k = lines.len();
            lines.swap(a % k, b % k);
            *bytes = lines.join(&b'\n');
        }
        Mutation::DupLine { at } => {
            let mut lines: Vec<Vec<u8>> =
                bytes.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect();
            let k = lines.len();
            let line = lines[at % k].clone();
            lines.insert(at % k, line);
            *bytes = lines.join(&b'\n');
        }
        Mutation::Truncate { at } => bytes.truncate(at % n),
        Mutation::Word { at, with } => {
            let text = String::from_utf8_lossy(bytes).into_owned();
            let word = WORDS[at % WORDS.len()];
            if let Some(pos) = text.match_indices(word).map(|(i, _)| i).nth(at % 7) {
                let mut t = text.clone();
                t.replace_range(pos..pos + word.len(), WORDS[with % WORDS.len()]);
                *bytes = t.into_bytes();
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_give_a_verdict_or_a_located_error(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        check_bytes(&bytes)?;
    }

    #[test]
    fn mutated_valid_histories_give_a_verdict_or_a_located_error(mutations in prop::collection::vec(mutation(), 1..6)) {
        let mut bytes = valid();
        for m in &mutations {
            apply(&mut bytes, m);
        }
        check_bytes(&bytes)?;
    }
}

#[test]
fn the_unmutated_history_is_valid() {
    let bytes = valid();
    let reader = HistoryReader::new(Path::new("fuzz.jsonl"), &bytes[..]);
    let params = LockCheckParams {
        property: Property::Exclusive,
        deadlock_ms: 1,
    };
    let found = check_run_reader(reader, &params).unwrap();
    assert_eq!(found.events, 42);
    assert_eq!(found.torn, None);
    assert_eq!(
        found.checks.lock.stats.acquires_ok, 6,
        "{}",
        found.checks.lock
    );
}
