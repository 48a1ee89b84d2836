//! A bounded fuzz loop over the scenario loader (proptest): generated scenarios and mutations
//! of the shipped ones never panic, and always give either a scenario that keeps the loader's
//! promises (a plain name, a schedule within its bound) or an error naming the file, a line
//! of it and a field. A few thousand cases, a few seconds: it runs with the other tests.

use lockpick_harness::fault::fault_names;
use lockpick_harness::locks::lock_names;
use lockpick_harness::nemesis::{build_schedule, max_steps};
use lockpick_harness::scenario::rules::{check_name, MAX_SCHEDULE_STEPS};
use lockpick_harness::scenario::{parse_scenario, Scenario};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::path::Path;

/// The shipped scenario files, as seeds for mutation.
fn shipped() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut texts: Vec<String> = std::fs::read_dir(&dir)
        .expect("the shipped scenarios")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "toml"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    texts.sort();
    assert!(texts.len() >= 10, "{} shipped scenarios", texts.len());
    texts
}

/// Values that sit on or past some limit, or are of the wrong kind.
const VALUES: &[&str] = &[
    "0",
    "1",
    "-1",
    "10",
    "1000",
    "86400000",
    "3600001",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "1e300",
    "nan",
    "-inf",
    "0.0",
    "[0, 0]",
    "[5, 1]",
    "[1, 2, 3]",
    "[]",
    "{}",
    "true",
    "\"\"",
    "\"../x\"",
    "\"a/../b\"",
    "\"x\\ny\"",
    "\"\\u001b[2J\"",
    "\"n1\"",
    "[\"n1\", \"n1\"]",
    "\"leader\"",
    "\"all\"",
    "\"random-one\"",
    "'''multi\nline'''",
];

/// Keys any part of a scenario may have, and a few it may not.
const KEYS: &[&str] = &[
    "name",
    "description",
    "expected",
    "seed",
    "kind",
    "nodes",
    "persistence",
    "ttl_ms",
    "acquire_timeout_ms",
    "retry_delay_ms",
    "op_timeout_ms",
    "watchdog",
    "wait_replicas",
    "clients",
    "duration_ms",
    "hold_ms",
    "think_ms",
    "locks",
    "mode",
    "property",
    "deadlock_ms",
    "fault",
    "at_ms",
    "every_ms",
    "count",
    "point",
    "client",
    "latency_ms",
    "jitter_ms",
    "offset_ms",
    "rate",
    "period_ms",
    "bogus",
];

const HEADERS: &[&str] = &[
    "[backend]",
    "[lock]",
    "[workload]",
    "[resource]",
    "[check]",
    "[[nemesis]]",
    "[nemesis]",
    "[backend",
    "[[x]]",
];

/// One edit of a scenario's lines.
#[derive(Debug, Clone)]
enum Edit {
    /// Sets the value of the line's key (or adds `key = value` there).
    SetValue {
        line: usize,
        value: usize,
    },
    InsertKey {
        line: usize,
        key: usize,
        value: usize,
    },
    InsertHeader {
        line: usize,
        header: usize,
    },
    DeleteLine {
        line: usize,
    },
    DuplicateLine {
        line: usize,
    },
    /// Cuts the text at a byte (on a char boundary at or before it).
    Truncate {
        at: usize,
    },
    /// Puts an arbitrary character somewhere.
    InsertChar {
        at: usize,
        c: char,
    },
}

fn edit() -> impl Strategy<Value = Edit> {
    let line = 0usize..64;
    prop_oneof![
        4 => (line.clone(), 0..VALUES.len()).prop_map(|(line, value)| Edit::SetValue { line, value }),
        3 => (line.clone(), 0..KEYS.len(), 0..VALUES.len())
            .prop_map(|(line, key, value)| Edit::InsertKey { line, key, value }),
        1 => (line.clone(), 0..HEADERS.len()).prop_map(|(line, header)| Edit::InsertHeader { line, header }),
        2 => line.clone().prop_map(|line| Edit::DeleteLine { line }),
        1 => line.prop_map(|line| Edit::DuplicateLine { line }),
        1 => (0usize..4096).prop_map(|at| Edit::Truncate { at }),
        1 => (0usize..4096, any::<char>()).prop_map(|(at, c)| Edit::InsertChar { at, c }),
    ]
}

fn apply(text: &str, edit: &Edit) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let n = lines.len().max(1);
    match edit {
        Edit::SetValue { line, value } => {
            let i = line % n;
            if let Some(l) = lines.get_mut(i) {
                let key = l
                    .split_once('=')
                    .map_or("name", |(k, _)| k.trim())
                    .to_owned();
                *l = format!("{key} = {}", VALUES[*value]);
            }
        }
        Edit::InsertKey { line, key, value } => {
            lines.insert(line % n, format!("{} = {}", KEYS[*key], VALUES[*value]));
        }
        Edit::InsertHeader { line, header } => lines.insert(line % n, HEADERS[*header].to_owned()),
        Edit::DeleteLine { line } => {
            if !lines.is_empty() {
                lines.remove(line % n);
            }
        }
        Edit::DuplicateLine { line } => {
            if let Some(l) = lines.get(line % n).cloned() {
                lines.insert(line % n, l);
            }
        }
        Edit::Truncate { at } => {
            let joined = lines.join("\n");
            let mut cut = (*at).min(joined.len());
            while !joined.is_char_boundary(cut) {
                cut -= 1;
            }
            return joined[..cut].to_owned();
        }
        Edit::InsertChar { at, c } => {
            let mut joined = lines.join("\n");
            let mut at = (*at).min(joined.len());
            while !joined.is_char_boundary(at) {
                at -= 1;
            }
            joined.insert(at, *c);
            return joined;
        }
    }
    lines.join("\n") + "\n"
}

/// What the loader promises for `text`.
fn check(text: &str) -> Result<(), TestCaseError> {
    let path = Path::new("fuzz/case.toml");
    let outcome = std::panic::catch_unwind(|| parse_scenario(path, text));
    let Ok(parsed) = outcome else {
        return Err(TestCaseError::fail(format!(
            "the loader panicked on {text:?}"
        )));
    };
    match parsed {
        Ok(s) => keeps_promises(&s, text),
        Err(e) => {
            let msg = e.to_string();
            let rest = msg
                .strip_prefix("load scenario fuzz/case.toml:")
                .ok_or_else(|| TestCaseError::fail(format!("no file in {msg:?}")))?;
            let (line, rest) = rest
                .split_once(": ")
                .ok_or_else(|| TestCaseError::fail(format!("no line in {msg:?}")))?;
            let line: usize = line
                .parse()
                .map_err(|_| TestCaseError::fail(format!("no line number in {msg:?}")))?;
            let lines = text.lines().count().max(1);
            prop_assert!(
                (1..=lines + 1).contains(&line),
                "line {line} of {lines}: {msg}"
            );
            prop_assert!(rest.starts_with("field `"), "no field in {msg:?}");
            prop_assert!(!msg.chars().any(char::is_control), "{msg:?}");
            Ok(())
        }
    }
}

fn keeps_promises(s: &Scenario, text: &str) -> Result<(), TestCaseError> {
    prop_assert!(check_name(&s.name).is_ok(), "{:?} from {text:?}", s.name);
    prop_assert!(check_name(&s.lock.name).is_ok(), "{:?}", s.lock.name);
    prop_assert!(!s.description.chars().any(char::is_control));
    let bound: u64 = s
        .nemesis
        .faults
        .iter()
        .map(|f| max_steps(f, s.workload.duration_ms))
        .sum();
    prop_assert!(bound <= MAX_SCHEDULE_STEPS, "bound {bound}");
    let steps = build_schedule(s, 1, s.workload.duration_ms, s.workload.clients);
    prop_assert!(
        steps.len() as u64 <= bound,
        "{} steps over the bound {bound}",
        steps.len()
    );
    Ok(())
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        // Failures are shown as found; shrinking a text through many edits is slow.
        max_shrink_iters: 200,
        failure_persistence: None,
        ..Config::default()
    })
}

#[test]
fn mutated_shipped_scenarios_load_or_fail_with_file_line_and_field() {
    let seeds = shipped();
    let strategy = (0..seeds.len(), proptest::collection::vec(edit(), 1..6));
    runner(1500)
        .run(&strategy, |(seed, edits)| {
            let text = edits.iter().fold(seeds[seed].clone(), |t, e| apply(&t, e));
            check(&text)
        })
        .unwrap();
}

/// A scenario put together from parts, each part sometimes left out or broken.
fn generated() -> impl Strategy<Value = String> {
    // Every name the loader knows, and one it does not.
    let with_unknown = |names: &[&'static str]| {
        let mut v = names.to_vec();
        v.push("nope");
        prop::sample::select(v)
    };
    let kind = with_unknown(&lock_names());
    let fault = with_unknown(&fault_names());
    let key_value = (0..KEYS.len(), 0..VALUES.len())
        .prop_map(|(k, v)| format!("{} = {}\n", KEYS[k], VALUES[v]));
    let nemesis = (fault, proptest::collection::vec(key_value.clone(), 0..6))
        .prop_map(|(f, kvs)| format!("[[nemesis]]\nfault = \"{f}\"\n{}", kvs.concat()));
    (
        kind,
        proptest::collection::vec(key_value, 0..6),
        proptest::collection::vec(nemesis, 0..4),
        any::<bool>(),
    )
        .prop_map(|(kind, extra, faults, with_name)| {
            let name = if with_name { "name = \"g\"\n" } else { "" };
            format!(
                "{name}[backend]\nkind = \"{kind}\"\n[workload]\nkind = \"counter\"\nclients = 3\nduration_ms = 5000\n{}{}",
                extra.concat(),
                faults.concat()
            )
        })
}

#[test]
fn generated_scenarios_load_or_fail_with_file_line_and_field() {
    runner(1500).run(&generated(), |text| check(&text)).unwrap();
}
