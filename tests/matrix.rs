//! `lockpick matrix` end to end: a tiny real matrix (redis × {no fault, a pause past the lease,
//! a pause shorter than it} × 1 seed) through the binary, its matrix.json and matrix.html, and
//! `--resume` running only what is missing.

mod cli_support;

use cli_support::{lockpick, stderr};
use serde_json::Value;
use std::path::{Path, PathBuf};

const TINY: &str = r#"
name = "tiny"
seeds = 1
[workload]
clients = 4
duration = "2x lease + 1000ms"
[lock]
acquire_timeout_ms = 1000
op_timeout_ms = 250

[[column]]
name = "none"
about = "no fault"

[[column]]
name = "pause"
about = "a GC pause of two leases"
fault = "client-pause"
point = "before-write"
at_ms = [200, 400]
duration = "2x lease"
must_outlast_lease = true

[[column]]
name = "short-pause"
about = "a GC pause of half a lease"
fault = "client-pause"
point = "before-write"
at_ms = [200, 400]
duration = "0.5x lease"
must_outlast_lease = true

[[row]]
lock = "redis"
ttl_ms = 300
expect.none = "valid: no fault"
expect.pause = "invalid: Kleppmann"
expect.short-pause = "valid: the lease outlives the pause"
"#;

fn only_dir(root: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs.into_iter().next().unwrap()
}

fn cell<'a>(json: &'a Value, column: &str) -> &'a Value {
    json["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["column"] == column)
        .unwrap_or_else(|| panic!("no cell {column}"))
}

fn run_folders(store: &Path, scenario: &str) -> usize {
    std::fs::read_dir(store.join(scenario))
        .map(|r| {
            r.flatten()
                .filter(|e| e.file_name().to_string_lossy().contains("seed"))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn a_tiny_matrix_runs_renders_and_resumes_only_what_is_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("tiny.toml");
    std::fs::write(&file, TINY).unwrap();
    let store = tmp.path().join("store");
    let (f, s) = (file.to_str().unwrap(), store.to_str().unwrap());
    let out = lockpick(&["matrix", f, "--store", s]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let dir = only_dir(&store.join("matrix"));
    let json: Value =
        serde_json::from_slice(&std::fs::read(dir.join("matrix.json")).unwrap()).unwrap();
    assert_eq!(json["v"], 1);

    let none = cell(&json, "none");
    assert_eq!(none["status"]["status"], "safe", "{none:#}");
    assert_eq!(none["mismatch"], false);

    // The pause was sized from the row's lease and outlasted it, as the history shows; the
    // paused holder's late write is the violation.
    let pause = cell(&json, "pause");
    assert!(
        pause["sizes"][1]
            .as_str()
            .unwrap()
            .starts_with("nemesis.duration_ms = 2x lease = 600 ms"),
        "{pause:#}"
    );
    let run = &pause["runs"][0];
    assert!(
        run["reached"]
            .as_str()
            .unwrap()
            .contains("outlasted the 300 ms lease"),
        "{run:#}"
    );
    assert_eq!(run["verdict"], "invalid", "{run:#}");
    assert_eq!(pause["status"]["status"], "unsafe");
    assert_eq!(pause["status"]["detail"]["k"], 1);
    assert!(run["first_violation_ms"].as_f64().unwrap() > 200.0);
    let reproduce = run["reproduce"].as_str().unwrap();
    assert!(
        reproduce.starts_with("cargo run -- scenario ")
            && reproduce.ends_with("scenarios/redis--pause.toml --seed 1"),
        "{reproduce}"
    );

    // A pause of half a lease could not let it run out: not tested, never "safe".
    let short = cell(&json, "short-pause");
    let run = &short["runs"][0];
    assert!(
        run["not_tested"]
            .as_str()
            .unwrap()
            .contains("not past the 300 ms lease"),
        "{run:#}"
    );
    if run["verdict"] == "valid" {
        assert_eq!(short["status"]["status"], "not-tested", "{short:#}");
    }

    let html = std::fs::read_to_string(dir.join("matrix.html")).unwrap();
    for needle in [
        "id=\"matrix-table\"",
        "data-status=\"unsafe\"",
        "data-status=\"safe\"",
        "UNSAFE 1",
        "a GC pause of two leases",
        "redis--pause.toml --seed 1",
        "<svg",
    ] {
        assert!(html.contains(needle), "matrix.html lacks {needle}");
    }
    assert!(!html.contains("src=\"http"), "the page fetches nothing");

    // Resume after losing one finished run: only that one is run again.
    std::fs::remove_file(dir.join("runs/redis--pause--seed1.json")).unwrap();
    let out = lockpick(&["matrix", "--resume", dir.to_str().unwrap(), "--store", s]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let ran: Vec<&str> = err.lines().filter(|l| l.contains(" seed 1: ")).collect();
    assert_eq!(ran.len(), 1, "{err}");
    assert!(ran[0].starts_with("redis × pause seed 1: "), "{err}");
    assert_eq!(run_folders(&store, "tiny-redis-none"), 1);
    assert_eq!(run_folders(&store, "tiny-redis-pause"), 2);
    assert!(dir.join("runs/redis--pause--seed1.json").is_file());
    // Resuming a complete matrix runs nothing.
    let out = lockpick(&["matrix", "--resume", dir.to_str().unwrap(), "--store", s]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!stderr(&out).contains(" seed 1: "), "{}", stderr(&out));

    // The markdown table from the recorded runs, with more seeds asked for: nothing runs, the
    // cells count the runs they have.
    let md = tmp.path().join("matrix.md");
    let out = lockpick(&[
        "matrix",
        "--resume",
        dir.to_str().unwrap(),
        "--store",
        s,
        "--seeds",
        "3",
        "--report-only",
        "--markdown",
        md.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains(" seed 2: "), "{}", stderr(&out));
    let md = std::fs::read_to_string(md).unwrap();
    for needle in [
        "# Safety matrix `tiny`",
        "| lock | none | pause | short-pause |",
        "| **redis** | safe 0/1 | UNSAFE 1/1 |",
        "- redis-server ",
        "**Incomplete:** 3 seeds per cell were asked for; the cells below have 1 to 1 run(s) each",
        "**redis × pause**: violations in 1 of 1 run(s). Expected invalid: Kleppmann.",
    ] {
        assert!(md.contains(needle), "{needle:?} not in:\n{md}");
    }
}

#[test]
fn a_bad_matrix_file_names_its_line_and_field() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("bad.toml");
    std::fs::write(&file, TINY.replace("lock = \"redis\"", "lock = \"redys\"")).unwrap();
    let store = tmp.path().join("store");
    let out = lockpick(&[
        "matrix",
        file.to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(
        err.contains("bad.toml:34: field `row.lock`: unknown lock \"redys\"; allowed: redis,"),
        "{err}"
    );
    assert!(!store.exists(), "nothing is written for a bad file");
}
