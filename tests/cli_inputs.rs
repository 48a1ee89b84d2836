//! Bad names and numbers given to the `lockpick` binary from outside: each is refused with exit
//! 3 and a message that says what is allowed, before anything is started or written.

use std::path::Path;
mod cli_support;

use cli_support::{lockpick, stderr};

/// A short redis scenario named `name` (as TOML source text), written to `dir/s.toml`.
fn scenario_file(dir: &Path, name_toml: &str, extra: &str) -> String {
    let path = dir.join("s.toml");
    std::fs::write(
        &path,
        format!(
            "name = {name_toml}\n[backend]\nkind = \"redis\"\n[workload]\nkind = \"fenced-write\"\nclients = 2\nduration_ms = 200\n{extra}"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn a_scenario_name_that_climbs_out_of_the_store_is_refused_and_nothing_is_touched() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    // The run folder of "../outside" would be tmp/outside, and its `latest` link tmp/latest.
    std::fs::write(tmp.path().join("latest"), "a file of the user's").unwrap();
    for name in [r#""../outside""#, r#""nested/deeper""#] {
        let file = scenario_file(tmp.path(), name, "");
        let out = lockpick(&["scenario", &file, "--store", store.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(":1: field `name`: "), "{err}");
        assert!(
            err.contains("allowed: 1 to 100 of A-Z a-z 0-9 . _ -, not starting with ."),
            "{err}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("latest")).unwrap(),
        "a file of the user's"
    );
    assert!(!tmp.path().join("outside").exists());
    assert!(!store.exists(), "nothing written for a refused scenario");
}

#[test]
fn names_with_newlines_escapes_nul_or_300_characters_are_refused_at_load() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let long = format!("\"{}\"", "n".repeat(300));
    for name in [
        r#""x\nlockpick: scenario forged with seed 0""#,
        r#""\u001b[2J\u001b[31mred""#,
        r#""nul\u0000""#,
        long.as_str(),
    ] {
        let file = scenario_file(tmp.path(), name, "");
        let out = lockpick(&["scenario", &file, "--store", store.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(3), "{name}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            !err.lines().any(|l| l.starts_with("lockpick: scenario")),
            "a forged line: {err}"
        );
        assert!(!err.contains('\u{1b}'), "a raw escape: {err:?}");
        assert!(err.contains("field `name`"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert!(!store.exists());
}

#[test]
fn numeric_options_out_of_range_exit_3_with_the_range() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["scenario", "redis-baseline", "--clients", "1000000"],
            "read --clients: 1000000 is out of range; allowed: 1 to 1000",
        ),
        (
            &["scenario", "redis-baseline", "--clients", "0"],
            "allowed: 1 to 1000",
        ),
        (
            &["scenario", "redis-baseline", "--time-limit", "1e300"],
            "read --time-limit: 1e300 is out of range; allowed: 0.001 to 86400 seconds",
        ),
        (
            &["scenario", "redis-baseline", "--time-limit=-1"],
            "allowed: 0.001 to 86400 seconds",
        ),
        (
            &[
                "compare",
                "redis-baseline",
                "--backends",
                "redis",
                "--clients",
                "5000",
            ],
            "allowed: 1 to 1000",
        ),
        (
            &[
                "compare",
                "redis-baseline",
                "--backends",
                "redis",
                "--time-limit",
                "inf",
            ],
            "allowed: 0.001 to 86400 seconds",
        ),
        (
            &["suite", "--seeds", "1000000000"],
            "read --seeds: 1000000000 is out of range; allowed: 1 to 10000",
        ),
        (&["suite", "--seeds", "0"], "allowed: 1 to 10000"),
        (&["scenario", "redis-baseline", "--seed=-1"], "--seed"),
        (
            &["scenario", "redis-baseline", "--clients", "1e3"],
            "--clients",
        ),
    ];
    let tmp = tempfile::tempdir().unwrap();
    for (args, says) in cases {
        let mut args = args.to_vec();
        args.extend(["--store", tmp.path().to_str().unwrap()]);
        let out = lockpick(&args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

#[test]
fn help_gives_the_range_of_every_numeric_option() {
    for (cmd, wanted) in [
        (
            "scenario",
            &["0 to 18446744073709551615", "0.001 to 86400", "1 to 1000"][..],
        ),
        (
            "compare",
            &["0 to 18446744073709551615", "0.001 to 86400", "1 to 1000"][..],
        ),
        ("suite", &["1 to 10000"][..]),
    ] {
        let out = lockpick(&[cmd, "--help"]);
        let text = String::from_utf8_lossy(&out.stdout);
        for w in wanted {
            assert!(text.contains(w), "{cmd} --help lacks {w:?}:\n{text}");
        }
    }
}

#[test]
fn fewer_clients_than_a_fault_aims_at_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let file = scenario_file(
        tmp.path(),
        r#""aimed""#,
        "[[nemesis]]\nfault = \"client-crash\"\nclient = 1\n",
    );
    let out = lockpick(&[
        "scenario",
        &file,
        "--clients",
        "1",
        "--store",
        tmp.path().join("store").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("fault client-crash (line 8 of")
            && err.contains("aimed at client 1; allowed: 2 to 1000"),
        "{err}"
    );
}

#[test]
fn a_longer_time_limit_must_keep_the_schedule_within_its_bound() {
    let tmp = tempfile::tempdir().unwrap();
    // Fine over the file's 200 ms; a day of it is 8.6 million pauses.
    let file = scenario_file(
        tmp.path(),
        r#""often""#,
        "[[nemesis]]\nfault = \"client-pause\"\nevery_ms = 10\nduration_ms = 1\n",
    );
    let out = lockpick(&["scenario", &file, "--time-limit", "86400"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "read --time-limit: fault client-pause (line 8) can take 8640000 schedule steps"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn closed_choices_are_refused_with_every_allowed_value_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().to_str().unwrap();
    let history = tmp.path().join("h.jsonl");
    std::fs::write(&history, "").unwrap();
    let history = history.to_str().unwrap();
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["check", history, "--property", "exclusve"],
            &["--property", "exclusive", "fenced"],
        ),
        (
            &["check", history, "--model", "regster"],
            &[
                "--model",
                "register",
                "cas-register",
                "fenced-mutex",
                "lease",
            ],
        ),
        (
            &["check", history, "--model", "kv", "--format", "json"],
            &["--format", "jepsen-log", "edn", "lockpick"],
        ),
        (
            &[
                "scenario",
                "redis-baseline",
                "--backend",
                "etc",
                "--store",
                store,
            ],
            &["--backend", "etcd", "zookeeper", "pg-lease-row"],
        ),
        // An unknown lock in a list is refused before the first run, not skipped after it.
        (
            &[
                "compare",
                "redis-baseline",
                "--backends",
                "redis,nope",
                "--store",
                store,
            ],
            &["--backends", "nope", "redlock"],
        ),
    ];
    for (args, says) in cases {
        let out = lockpick(args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", stderr(&out));
        for s in *says {
            assert!(
                stderr(&out).contains(s),
                "{args:?} lacks {s:?}: {}",
                stderr(&out)
            );
        }
    }
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        1,
        "only h.jsonl"
    );
}

#[test]
fn a_lock_that_cannot_take_the_scenarios_locks_is_bad_input_for_scenario_and_compare() {
    // Refused by the run itself, before any server starts; it exited 4 (harness) before.
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let file = scenario_file(tmp.path(), r#""many""#, "locks = 2\n");
    for args in [
        ["scenario", file.as_str(), "--backend", "etcd"],
        ["compare", file.as_str(), "--backends", "etcd"],
    ] {
        let mut args = args.to_vec();
        args.extend(["--store", store.to_str().unwrap()]);
        let out = lockpick(&args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(
                "failed to run many with client \"etcd\": the scenario spreads its operations \
                 over 2 locks"
            ),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    assert!(
        stderr(&lockpick(&[
            "scenario",
            &file,
            "--backend",
            "etcd",
            "--store",
            store.to_str().unwrap()
        ]))
        .contains("\n  reproduce: cargo run -- scenario "),
        "scenario still says how to repeat it"
    );
    assert!(!store.exists(), "nothing written for a refused run");
}

#[test]
fn toxiproxy_listening_off_loopback_is_bad_input() {
    // It exited 4 (harness) before, unlike `serve --listen` off loopback.
    let out = lockpick(&["toxiproxy", "--listen", "192.0.2.1:8474"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("failed to listen on 192.0.2.1:8474: only loopback addresses"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn model_help_and_its_error_list_every_registered_model() {
    let help = String::from_utf8_lossy(&lockpick(&["check", "--help"]).stdout).into_owned();
    let out = lockpick(&["check", "h.jsonl", "--model", "no-such-model"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let listed = format!(
        "[possible values: {}]",
        lockpick_checker::models::model_names().join(", ")
    );
    assert!(help.contains(&listed), "{listed} not in:\n{help}");
    assert!(stderr(&out).contains(&listed), "{}", stderr(&out));
}

/// The repository's root (shipped scenarios and adapters).
fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A process-client scenario in `dir/p.toml` whose `[client]` table is `client` (TOML lines).
fn process_scenario(dir: &Path, client: &str) -> String {
    let path = dir.join("p.toml");
    std::fs::write(
        &path,
        format!(
            "name = \"p\"\n[server]\nkind = \"redis\"\n[client]\nkind = \"process\"\n{client}\n\
             [workload]\nkind = \"fenced-write\"\nclients = 1\nduration_ms = 200\n"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn an_init_option_the_adapter_does_not_declare_or_of_another_type_is_refused_before_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let adapter = repo().join("clients/python/redis_lock/adapter.py");
    let command = format!("command = [\"python3\", \"{}\"]", adapter.display());
    for (init, field, allowed) in [
        // The issue's case: a table where a boolean belongs, which ran the other variant.
        (
            "init = { auto_renewal = { on = true } }",
            "field `client.init.auto_renewal`: a table is not allowed; allowed: a boolean",
            "",
        ),
        (
            "init = { auto_renwal = true }",
            "field `client.init.auto_renwal`: the adapter takes no option `auto_renwal`",
            "allowed: auto_renewal (a boolean (true or false))",
        ),
    ] {
        let file = process_scenario(tmp.path(), &format!("{command}\n{init}"));
        let out = lockpick(&["scenario", &file, "--store", store.to_str().unwrap()]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{err}");
        assert!(err.contains("p.toml:7: "), "file and line: {err}");
        assert!(err.contains(field), "{err}");
        assert!(err.contains(allowed), "{err}");
        assert!(
            err.contains("lockpick-adapter.json"),
            "names the declaration: {err}"
        );
    }
    assert!(
        !store.exists(),
        "refused before anything was written or started"
    );
}

#[test]
fn a_wrong_adapter_command_is_a_usage_error_naming_the_field() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    std::fs::write(tmp.path().join("adapter.py"), "").unwrap();
    for (command, says) in [
        (
            r#"command = ["pyhton3", "./adapter.py"]"#.to_owned(),
            "program `pyhton3` is not on PATH",
        ),
        (
            r#"command = ["python3", "./adaptr.py"]"#.to_owned(),
            "adaptr.py does not exist",
        ),
        (
            r#"command = ["sh", "/bin/sh", "./adapter.py"]"#.to_owned(),
            "an interpreter named twice",
        ),
    ] {
        let file = process_scenario(tmp.path(), &command);
        let out = lockpick(&["scenario", &file, "--store", store.to_str().unwrap()]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{command}: {err}");
        assert!(err.contains("p.toml:6: field `client.command`: "), "{err}");
        assert!(err.contains(says), "{err}");
    }
    assert!(!store.exists());
}

#[test]
fn a_scenario_reached_through_a_symlinked_folder_resolves_its_paths_against_the_real_one() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    // s -> the repo's scenarios/: `../clients/python/.venv/bin/python` must lead to the repo's
    // venv, not to tmp/clients (which does not exist), or the adapter cannot start.
    std::os::unix::fs::symlink(repo().join("scenarios"), tmp.path().join("s")).unwrap();
    let file = tmp.path().join("s/python-redis-py-baseline.toml");
    let out = lockpick(&[
        "scenario",
        file.to_str().unwrap(),
        "--time-limit",
        "0.5",
        "--store",
        store.to_str().unwrap(),
    ]);
    let err = stderr(&out);
    assert!(
        matches!(out.status.code(), Some(0..=2)),
        "a verdict, not an error: {err}"
    );
    let hello = store.join("python-redis-py-baseline/latest/clients/hello.json");
    assert!(hello.is_file(), "the adapter started and said hello: {err}");
    // The run's stored scenario keeps its relative adapter paths, which lead nowhere from the
    // run folder: `check` still reads it for the property it promised.
    let run = store.join("python-redis-py-baseline/latest");
    let out = lockpick(&["check", run.to_str().unwrap()]);
    let err = stderr(&out);
    assert!(matches!(out.status.code(), Some(0..=2)), "{err}");
    assert!(!err.contains("scenario.toml"), "{err}");
}

#[test]
fn a_closed_stdout_ends_quietly_with_its_documented_code() {
    // A pipe whose reading end is closed before lockpick writes: every write is EPIPE.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lockpick"))
        .arg("list")
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.is_empty(), "quietly: {err}");
}
