//! `lockpick check` on bad input, as a user runs it: nesting past the reader's limit, a model
//! fed a history it does not take, a run folder with a broken scenario.toml, numeric options
//! out of range. Every one answers with exit 3 and a sentence naming what is wrong.

use lockpick_checker::history::{Event, EventKind, Process, Value, F, FORMAT_VERSION};
use std::path::Path;
mod cli_support;

use cli_support::{lockpick, stderr};

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn deeply_nested_values_exit_3_naming_file_line_and_limit_not_134() {
    // issue 12 item 3: a line of brackets aborted with a stack overflow (exit 134).
    let dir = tempfile::tempdir().unwrap();
    let deep = format!("{}{}", "[".repeat(50_000), "]".repeat(50_000));
    let edn = write(
        dir.path(),
        "deep.edn",
        &format!("{{:process 0, :type :invoke, :f :write, :value 1}}\n{{:process 0, :type :ok, :f :write, :value {deep}}}\n"),
    );
    let log = write(
        dir.path(),
        "deep.log",
        &format!("INFO  jepsen.util - 0\t:invoke\t:write\t1\nINFO  jepsen.util - 0\t:ok\t:write\t{deep}\n"),
    );
    for (path, format) in [(&edn, "jepsen edn"), (&log, "jepsen log")] {
        let out = lockpick(&["check", "--model", "register", path]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{err}");
        assert!(err.contains(path.as_str()), "{err}");
        assert!(err.contains(&format!("{format} history line 2")), "{err}");
        assert!(err.contains("deeper than 128 levels"), "{err}");
    }
}

#[test]
fn a_lock_model_on_a_register_history_exits_3_instead_of_valid() {
    // issue 12 item 9: reads 2 that nobody wrote, yet every lock model said valid (exit 0).
    let dir = tempfile::tempdir().unwrap();
    let history = write(
        dir.path(),
        "register.log",
        "INFO  jepsen.util - 0\t:invoke\t:write\t1\nINFO  jepsen.util - 0\t:ok\t:write\t1\nINFO  jepsen.util - 1\t:invoke\t:read\tnil\nINFO  jepsen.util - 1\t:ok\t:read\t2\n",
    );
    let out = lockpick(&["check", "--model", "register", &history]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    for model in ["mutex", "lease", "fenced-mutex"] {
        let out = lockpick(&["check", "--model", model, &history]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{model}: {err}");
        assert!(err.contains("check line 1"), "{err}");
        assert!(err.contains("takes acquire, release, renew"), "{err}");
    }
    // And the other way: a register model fed a lock history names the first lock op.
    let locks = write(
        dir.path(),
        "locks.edn",
        "; two holders\n{:process 0, :type :invoke, :f :acquire, :value nil}\n{:process 0, :type :ok, :f :acquire, :value 1}\n",
    );
    for model in ["register", "cas-register", "kv"] {
        let out = lockpick(&["check", "--model", model, &locks]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{model}: {err}");
        assert!(err.contains("check line 2"), "{err}");
        assert!(
            err.contains("acquire is not an operation of this model"),
            "{err}"
        );
    }
}

/// A fenced run in which the lock had two holders at once (a lease ran out) but the resource
/// refused the old holder's write: valid under `fenced`, invalid under `exclusive`.
fn fenced_run_history() -> String {
    let mut events = Vec::new();
    let mut push = |ms: u64, p: u64, kind: EventKind, f: F, value: Value, error: Option<&str>| {
        events.push(Event {
            v: FORMAT_VERSION,
            index: events.len() as u64,
            time_ns: ms * 1_000_000,
            process: Process::Client(p),
            kind,
            f,
            lock: Some("lock".into()),
            value,
            error: error.map(str::to_owned),
        })
    };
    let token = |t: u64| Value {
        token: Some(t),
        ..Value::default()
    };
    push(0, 0, EventKind::Invoke, F::Acquire, Value::default(), None);
    push(10, 0, EventKind::Ok, F::Acquire, token(1), None);
    push(
        100,
        1,
        EventKind::Invoke,
        F::Acquire,
        Value::default(),
        None,
    );
    push(320, 1, EventKind::Ok, F::Acquire, token(2), None);
    push(330, 1, EventKind::Invoke, F::Write, token(2), None);
    push(340, 1, EventKind::Ok, F::Write, token(2), None);
    push(360, 0, EventKind::Invoke, F::Write, token(1), None);
    let rejected = Value {
        token: Some(1),
        max_token: Some(2),
        ..Value::default()
    };
    push(
        370,
        0,
        EventKind::Fail,
        F::Write,
        rejected,
        Some("stale-token"),
    );
    push(
        400,
        1,
        EventKind::Invoke,
        F::Release,
        Value::default(),
        None,
    );
    push(410, 1, EventKind::Ok, F::Release, Value::default(), None);
    push(
        500,
        0,
        EventKind::Invoke,
        F::Release,
        Value::default(),
        None,
    );
    push(
        510,
        0,
        EventKind::Fail,
        F::Release,
        Value::default(),
        Some("not-owner"),
    );
    // The scenario's GC pause: process 0 stopped from 20 ms to 350 ms, past the 300 ms lease
    // of its grant at 10 ms, and taken over at 320 ms meanwhile. Without it the run would be
    // not exposed (docs/exposure.md).
    let pause = |ms: u64, f: F| Event {
        v: FORMAT_VERSION,
        index: 0,
        time_ns: ms * 1_000_000,
        process: Process::Nemesis,
        kind: EventKind::Info,
        f,
        lock: None,
        value: Value {
            client: Some(0),
            ..Value::default()
        },
        error: None,
    };
    events.insert(2, pause(20, F::Pause));
    events.insert(7, pause(350, F::Resume));
    for (i, e) in events.iter_mut().enumerate() {
        e.index = i as u64;
    }
    events
        .iter()
        .map(|e| serde_json::to_string(e).unwrap() + "\n")
        .collect()
}

#[test]
fn an_unreadable_scenario_toml_is_an_error_not_a_fallback_to_exclusive() {
    // issue 12 item 10: a broken scenario.toml made `check` fall back to exclusive silently
    // and call this valid fenced run INVALID.
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path();
    write(run, "history.jsonl", &fenced_run_history());
    let scenario = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/redis-gc-pause-fenced.toml"),
    )
    .unwrap();
    assert!(
        scenario.contains("fenced"),
        "the shipped scenario is fenced"
    );
    let toml = write(run, "scenario.toml", &scenario);
    let run_arg = run.to_str().unwrap();
    let out = lockpick(&["check", run_arg]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Under exclusive the double holder is a violation: what the fallback gave.
    let out = lockpick(&["check", run_arg, "--property", "exclusive"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));

    std::fs::write(&toml, format!("{scenario}\n[unclosed\n")).unwrap();
    let out = lockpick(&["check", run_arg]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains(&toml), "names the file: {err}");
    assert!(err.contains("--property and --deadlock-ms"), "{err}");
    // Only --property is not enough: the deadlock threshold would still be guessed.
    let out = lockpick(&["check", run_arg, "--property", "fenced"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let out = lockpick(&[
        "check",
        run_arg,
        "--property",
        "fenced",
        "--deadlock-ms",
        "3000",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Not a file at all (a folder in its place) is unreadable too.
    std::fs::remove_file(&toml).unwrap();
    std::fs::create_dir(&toml).unwrap();
    let out = lockpick(&["check", run_arg]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains(&format!("read {toml}")), "{err}");
}

#[test]
fn numeric_options_outside_their_range_exit_3_naming_the_range() {
    // issue 14 item 8: `--budget 1e300` panicked (exit 101).
    let dir = tempfile::tempdir().unwrap();
    let history = write(
        dir.path(),
        "h.log",
        "INFO  jepsen.util - 0\t:invoke\t:write\t1\nINFO  jepsen.util - 0\t:ok\t:write\t1\n",
    );
    for budget in ["1e300", "0", "-5", "NaN", "inf", "86401"] {
        let flag = format!("--budget={budget}");
        let out = lockpick(&["check", "--model", "register", &flag, &history]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "--budget {budget}: {err}");
        assert!(err.contains("0.001 to 86400 seconds"), "{err}");
    }
    let out = lockpick(&["check", "--model", "register", "--budget", "0.5", &history]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for ms in ["0", "86400001", "-1", "1e3"] {
        let flag = format!("--deadlock-ms={ms}");
        let out = lockpick(&["check", &history, &flag]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "--deadlock-ms {ms}: {err}");
        assert!(err.contains("1 to 86400000 ms"), "{err}");
    }
    let help = lockpick(&["check", "--help"]);
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("0.001 to 86400"), "{text}");
    assert!(text.contains("1 to 86400000"), "{text}");
}

#[test]
fn invalid_utf8_names_the_file_line_and_byte() {
    // issue 14 item 11: invalid UTF-8 named the file but no line or byte offset.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.log");
    let mut bytes =
        b"INFO  jepsen.util - 0\t:invoke\t:write\t1\nINFO  jepsen.util - 0\t:ok\t:write\t".to_vec();
    let offset = bytes.len();
    bytes.extend_from_slice(b"\xff\xfe1\n");
    std::fs::write(&path, bytes).unwrap();
    let path = path.to_str().unwrap();
    let out = lockpick(&["check", "--model", "register", path]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains(&format!(
            "{path}: line 2 is not valid UTF-8 (byte {offset} of the file)"
        )),
        "{err}"
    );
}
