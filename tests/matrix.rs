//! `lockpick matrix` end to end: a tiny real matrix (redis × {no fault, a pause past the lease,
//! a pause shorter than it} × 1 seed) through the binary, its matrix.json and matrix.html, and
//! `--resume` running only what is missing. The matrices run one at a time (leases of 300 ms
//! on a 2-core machine: two at once made each other's clients miss leases): the `matrix` test
//! group of .config/nextest.toml.

mod cli_support;

use cli_support::{both, lockpick, only_dir, stderr};
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

[[column]]
name = "short-pause"
about = "a GC pause of half a lease"
fault = "client-pause"
point = "before-write"
at_ms = [200, 400]
duration = "0.5x lease"

[[row]]
lock = "redis"
ttl_ms = 300
expect.none = "valid: no fault"
expect.pause = "invalid: Kleppmann"
expect.short-pause = "valid: the lease outlives the pause"
"#;

/// `lockpick matrix --resume DIR --store STORE --report-only`, and `extra`.
fn report_only(dir: &Path, store: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "matrix",
        "--resume",
        dir.to_str().unwrap(),
        "--store",
        store,
        "--report-only",
    ];
    args.extend_from_slice(extra);
    lockpick(&args)
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

/// A temporary folder with [`TINY`] as `tiny.toml`, the file's path and a store's beside it.
fn tiny_in_tmp() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("tiny.toml");
    std::fs::write(&file, TINY).unwrap();
    let store = tmp.path().join("store");
    (tmp, file, store)
}

#[test]
fn a_tiny_matrix_runs_renders_and_resumes_only_what_is_missing() {
    let (tmp, file, store) = tiny_in_tmp();
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
        run["exposed_by"]
            .as_str()
            .unwrap()
            .contains("the pause outlasted the 300 ms lease its client held"),
        "{run:#}"
    );
    assert_eq!(run["verdict"], "invalid", "{run:#}");
    assert_eq!(pause["status"]["status"], "unsafe");
    assert_eq!(pause["status"]["detail"]["k"], 1);
    assert!(run["first_violation_ms"].as_f64().unwrap() > 200.0);
    let reproduce = run["reproduce"].as_str().unwrap();
    assert!(
        reproduce.starts_with("cargo run -- scenario ")
            && reproduce.ends_with(&format!("scenarios/redis--pause.toml --seed 1 --store {s}")),
        "{reproduce}"
    );

    // A pause of half a lease could not let it run out: not exposed, never "safe".
    let short = cell(&json, "short-pause");
    let run = &short["runs"][0];
    assert!(
        run["not_exposed"]
            .as_str()
            .unwrap()
            .contains("within its 300 ms lease"),
        "{run:#}"
    );
    assert_eq!(
        run["exposed_instances"],
        serde_json::json!([0, 1]),
        "{run:#}"
    );
    if run["verdict"] == "not-exposed" {
        assert_eq!(short["status"]["status"], "not-exposed", "{short:#}");
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

    // The record names the build that made its runs, commit and all; another build may not
    // add runs to it (their verdicts would be another checker's), only make its page again.
    let record = std::fs::read(dir.join("matrix.json")).unwrap();
    let mut json: Value = serde_json::from_slice(&record).unwrap();
    let build = json["lockpick_version"].as_str().unwrap().to_owned();
    assert!(
        build.starts_with(&format!("{} (commit ", env!("CARGO_PKG_VERSION"))),
        "{build}"
    );
    json["lockpick_version"] = "0.0.9 (commit 0123456789ab)".into();
    std::fs::write(dir.join("matrix.json"), json.to_string()).unwrap();
    let out = lockpick(&["matrix", "--resume", dir.to_str().unwrap(), "--store", s]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains(
            "its runs were made by lockpick 0.0.9 (commit 0123456789ab), and this is lockpick "
        ) && err.contains("--report-only"),
        "{err}"
    );
    // Its page made again by this build still names the build that made the runs.
    let out = report_only(&dir, s, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let again: Value =
        serde_json::from_slice(&std::fs::read(dir.join("matrix.json")).unwrap()).unwrap();
    assert_eq!(again["lockpick_version"], "0.0.9 (commit 0123456789ab)");
    std::fs::write(dir.join("matrix.json"), &record).unwrap();

    // The markdown table from the recorded runs, with more seeds asked for: nothing runs, the
    // cells count the runs they have.
    let md = tmp.path().join("matrix.md");
    let junit = tmp.path().join("matrix.xml");
    let out = report_only(
        &dir,
        s,
        &[
            "--seeds",
            "3",
            "--markdown",
            md.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains(" seed 2: "), "{}", stderr(&out));
    // The JUnit file says what the page says: a testcase per cell, the figures as properties,
    // valid against the schema the suite's file is held to.
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains(r#"<property name="cell.pause" value="UNSAFE 1/1 2–100%"/>"#),
        "{xml}"
    );
    assert!(xml.contains(r#"<testcase name="pause" classname="lockpick.matrix.tiny.redis""#));
    cli_support::assert_junit_valid(&junit);
    // The record the page was made from, beside it.
    assert!(tmp.path().join("matrix.matrix.json").is_file());
    let md = std::fs::read_to_string(md).unwrap();
    for needle in [
        "# Safety matrix `tiny`",
        "| lock | none | pause | short-pause |",
        // Each count with its 95% interval: one run bounds little. Each cell on one line,
        // UNSAFE marked, linked to its sentence below.
        "| **redis** | [safe&nbsp;0/1&nbsp;≤98%](#cell-redis--none) | [**🔴&nbsp;UNSAFE&nbsp;1/1&nbsp;2–100%**](#cell-redis--pause) |",
        r#"- <a id="cell-redis--pause"></a>**redis × pause**: "#,
        "- redis-server ",
        "**Incomplete:** 3 seeds per cell were asked for; the cells below have 1 to 1 run(s) each",
        "**redis × pause**: safety violations in 1 of 1 run(s) that could show one; the rate is ",
        "(Clopper-Pearson, 95%). Expected invalid: Kleppmann.",
        // The matrix file is a temporary one, outside any checkout: the page says so.
        "nothing shows they were written before the runs",
    ] {
        assert!(md.contains(needle), "{needle:?} not in:\n{md}");
    }
    // The page is read on other machines: the last command names no path of this one.
    let last = md
        .lines()
        .find(|l| l.starts_with("The last command run on it: "))
        .unwrap();
    assert!(!last.contains(s), "{last}");
    assert!(last.contains(" --store STORE"), "{last}");

    // `matrix render`: the file's expectation of the pause cell changed after the runs; the
    // page is made again from its record alone, the cell marked as the file judges it now,
    // and its command kept.
    let md_path = tmp.path().join("matrix.md");
    let rejudged = tmp.path().join("rejudged.toml");
    std::fs::write(
        &rejudged,
        TINY.replace(
            r#"expect.pause = "invalid: Kleppmann""#,
            r#"expect.pause = "valid: a pause cannot hurt it""#,
        ),
    )
    .unwrap();
    let (p, r) = (md_path.to_str().unwrap(), rejudged.to_str().unwrap());
    let out = lockpick(&["matrix", "render", p, r]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("(1 cell(s) disagree with their expectation)"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let again = std::fs::read_to_string(&md_path).unwrap();
    for needle in [
        "[**🔴&nbsp;UNSAFE&nbsp;1/1&nbsp;2–100%&nbsp;≠**](#cell-redis--pause)",
        "Expected valid: a pause cannot hurt it.",
        " matrix --seeds 3 --markdown ",
    ] {
        assert!(again.contains(needle), "{needle:?} not in:\n{again}");
    }
    // Judged by the first file again: the page it was.
    let out = lockpick(&["matrix", "render", p, f]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&md_path).unwrap(), md);
    // A page lockpick did not write is refused, naming what it looks for.
    let hand = tmp.path().join("hand.md");
    std::fs::write(&hand, "# my notes\n").unwrap();
    std::fs::copy(
        tmp.path().join("matrix.matrix.json"),
        tmp.path().join("hand.matrix.json"),
    )
    .unwrap();
    let out = lockpick(&["matrix", "render", hand.to_str().unwrap(), f]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("has no \"To make it again from nothing:\" command block"),
        "{}",
        stderr(&out)
    );
    // Resumed again without --seeds, the matrix keeps the 3 seeds it was last run with, not
    // the file's 1.
    let out = report_only(&dir, s, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: Value =
        serde_json::from_slice(&std::fs::read(dir.join("matrix.json")).unwrap()).unwrap();
    assert_eq!(json["seeds"], 3);

    // `matrix diff`: the same matrix with the pause cell's run made valid, against this one.
    let mut older = json.clone();
    for cell in older["cells"].as_array_mut().unwrap() {
        if cell["column"] == "pause" {
            for run in cell["runs"].as_array_mut().unwrap() {
                run["verdict"] = "valid".into();
                run["violations"] = 0.into();
            }
        }
    }
    let old = tmp.path().join("old-matrix.json");
    std::fs::write(&old, serde_json::to_vec(&older).unwrap()).unwrap();
    let out = lockpick(&[
        "matrix",
        "diff",
        old.to_str().unwrap(),
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "Holm-corrected",
        "moved: 0\n",
        // Counted from the runs; the labels are the ones each record shows.
        "changed within noise: 1\n  redis × pause: 0/1 → 1/1 (",
        "UNSAFE 1/1 2–100%), p = 1.000, corrected 1.000",
        "not compared: 1\n  redis × short-pause: no run that could show a violation",
    ] {
        assert!(text.contains(needle), "{needle:?} not in:\n{text}");
    }
    let out = lockpick(&[
        "matrix",
        "diff",
        "/nonexistent/store",
        old.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("matrix diff /nonexistent/store: no matrix.json there; allowed: a matrix.json, the matrix folder holding one, or a store"),
        "{}",
        stderr(&out)
    );

    // `--recheck`: the pause run recorded as an older checker might have judged it (valid, in
    // its matrix record and its results.json), and the none run's folder gone. Checked again
    // from its history, the pause run is invalid again, the page says what it was; the run
    // with no history left is kept as recorded, and said so.
    let record = dir.join("runs/redis--pause--seed1.json");
    let mut run: Value = serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
    let folder = store.join(run["run"].as_str().unwrap());
    run["verdict"] = "valid".into();
    run["violations"] = 0.into();
    std::fs::write(&record, serde_json::to_vec(&run).unwrap()).unwrap();
    let results = folder.join("results.json");
    let mut r: Value = serde_json::from_slice(&std::fs::read(&results).unwrap()).unwrap();
    r["verdict"] = "valid".into();
    std::fs::write(&results, serde_json::to_vec(&r).unwrap()).unwrap();
    let none: Value =
        serde_json::from_slice(&std::fs::read(dir.join("runs/redis--none--seed1.json")).unwrap())
            .unwrap();
    std::fs::remove_dir_all(store.join(none["run"].as_str().unwrap())).unwrap();
    let page = tmp.path().join("matrix.md");
    let out = report_only(
        &dir,
        s,
        &["--recheck", "--markdown", page.to_str().unwrap()],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("redis × pause seed 1: valid -> invalid"),
        "{text}\n{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("redis × none seed 1: kept as recorded: read "),
        "{}",
        stderr(&out)
    );
    let json = matrix_json(&dir);
    let run = &cell(&json, "pause")["runs"][0];
    assert_eq!(run["verdict"], "invalid", "{run:#}");
    assert_eq!(run["recheck"]["was"], "valid", "{run:#}");
    assert!(run["violations"].as_u64().unwrap() > 0, "{run:#}");
    assert!(cell(&json, "none")["runs"][0].get("recheck").is_none());
    let r: Value = serde_json::from_slice(&std::fs::read(&results).unwrap()).unwrap();
    assert_eq!(r["verdict"], "invalid");
    let page = std::fs::read_to_string(tmp.path().join("matrix.md")).unwrap();
    assert!(
        page.contains("**Checked again:** The histories of 2 of the 3 runs")
            && page.contains("redis × pause seed 1 (valid before, invalid now)"),
        "{page}"
    );
}

#[test]
fn explore_safe_breaks_a_cell_whose_fixed_size_tested_nothing_and_resuming_does_not_search_again() {
    let (_tmp, file, store) = tiny_in_tmp();
    let (f, s) = (file.to_str().unwrap(), store.to_str().unwrap());
    // A shard cannot know which cells came out safe: refused before anything runs.
    let out = lockpick(&[
        "matrix",
        f,
        "--store",
        s,
        "--shard",
        "1/2",
        "--explore-safe",
        "30s",
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not with shard 1/2"),
        "{}",
        stderr(&out)
    );
    assert!(!store.join("matrix").exists());

    // The short pause (half the 300 ms lease) cannot let the lease run out, so the cell tests
    // nothing at its fixed size; the search draws client pauses up to three leases long on
    // the same lock and workload, and a pause past the lease breaks the naive resource:
    // Kleppmann's case, since the lock itself is correct. The cell expected valid now
    // disagrees (exit 5).
    let out = lockpick(&[
        "matrix",
        f,
        "--store",
        s,
        "--faults",
        "none,short-pause",
        "--explore-safe",
        "30s",
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(
        err.contains("not exploring redis × none: the column has no fault to draw"),
        "{err}"
    );
    let dir = only_dir(&store.join("matrix"));
    let json: Value =
        serde_json::from_slice(&std::fs::read(dir.join("matrix.json")).unwrap()).unwrap();
    let short = cell(&json, "short-pause");
    assert_eq!(short["status"]["status"], "unsafe-explored", "{short:#}");
    assert_eq!(short["status"]["detail"]["class"], "kleppmann", "{short:#}");
    assert_eq!(short["mismatch"], true);
    assert_eq!(
        short["runs"][0]["verdict"], "not-exposed",
        "the fixed size exposed nothing"
    );
    assert_eq!(short["runs"][0]["violations"], 0);
    let explored = &short["explored"];
    assert_eq!(explored["broke"], true, "{explored:#}");
    assert_eq!(explored["faults"], serde_json::json!(["client-pause"]));
    assert!(explored["runs"].as_u64().unwrap() >= 1);
    let repeat = explored["repeat"].as_str().unwrap();
    assert!(repeat.contains("-shrunk.toml --seed "), "{repeat}");
    assert!(
        explored["command"].as_str().unwrap().contains("explore ")
            && explored["command"].as_str().unwrap().contains(
                "--row redis --column short-pause --faults client-pause --fixed-workload --seed 1"
            ),
        "{explored:#}"
    );
    assert!(dir.join("explore/redis--short-pause.json").is_file());
    // The exploration is an ordinary one, with its page, linked from the matrix's.
    let searches = std::fs::read_dir(store.join("explore")).unwrap().count();
    assert_eq!(searches, 1);
    let ex_dir = store.join(explored["dir"].as_str().unwrap());
    assert!(ex_dir.join("explore.html").is_file(), "{ex_dir:?}");
    let html = std::fs::read_to_string(dir.join("matrix.html"))
        .unwrap()
        .replace("&#x2f;", "/");
    assert!(html.contains("UNSAFE (explore)"));
    assert!(html.contains(&format!(
        "class=\"explore-page\" href=\"../../{}/explore.html\"",
        explored["dir"].as_str().unwrap()
    )));
    assert_eq!(cell(&json, "none")["explored"], Value::Null);

    // Resuming with the same option searches nothing again: the cell's search is recorded.
    let d = dir.to_str().unwrap();
    let out = lockpick(&[
        "matrix",
        "--resume",
        d,
        "--store",
        s,
        "--faults",
        "none,short-pause",
        "--explore-safe",
        "30s",
    ]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert_eq!(std::fs::read_dir(store.join("explore")).unwrap().count(), 1);
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
        err.contains("bad.toml:32: field `row.lock`: unknown lock \"redys\"; allowed: redis,"),
        "{err}"
    );
    assert!(!store.exists(), "nothing is written for a bad file");
}

/// The pinned version of a Python package, from the adapters' lock file.
fn pinned(package: &str) -> String {
    let lock = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/python/requirements.lock"),
    )
    .unwrap();
    let prefix = format!("{package}==");
    lock.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map(|v| v.trim_end_matches(" \\").trim().to_owned())
        .unwrap_or_else(|| panic!("{package} is not pinned"))
}

/// A library row of the shipped library matrix (redis-py's Lock through its adapter, installed
/// by `bash scripts/setup`) under a pause of two leases, one seed: the pause is sized from the
/// row's lease and tested, the verdict is the library's, the page and the markdown name the
/// library and the version its adapter reported, the printed reproduce command repeats the
/// run, and a resumed matrix still finds the adapter (its path is relative to the shipped file).
#[test]
fn a_library_row_runs_through_its_adapter_and_its_cell_reproduces() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let md = tmp.path().join("libraries.md");
    let s = store.to_str().unwrap();
    let args = [
        "matrix",
        "scenarios/matrix/libraries.toml",
        "--rows",
        "python-redis-py",
        "--faults",
        "client-pause",
        "--seeds",
        "1",
        "--store",
        s,
        "--markdown",
        md.to_str().unwrap(),
    ];
    let out = lockpick(&args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let dir = only_dir(&store.join("matrix"));
    let json: Value =
        serde_json::from_slice(&std::fs::read(dir.join("matrix.json")).unwrap()).unwrap();
    let pause = json["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["row"] == "python-redis-py" && c["column"] == "client-pause")
        .unwrap();
    assert!(
        pause["sizes"][1]
            .as_str()
            .unwrap()
            .starts_with("nemesis.duration_ms = 2x lease = 2000 ms"),
        "{pause:#}"
    );
    let run = &pause["runs"][0];
    assert!(run["error"].is_null(), "{run:#}");
    // The lease is the one the adapter reported with the grant (what was left of the TTL).
    let exposed_by = run["exposed_by"].as_str().unwrap_or_default();
    let lease: u64 = exposed_by
        .split_once("outlasted the ")
        .and_then(|(_, rest)| rest.split_once(" ms lease"))
        .map(|(ms, _)| ms)
        .and_then(|ms| ms.parse().ok())
        .unwrap_or_else(|| panic!("{run:#}"));
    assert!(lease <= 1000, "{run:#}");
    // redis-py's lock has no fencing token: the paused holder's late write lands.
    assert_eq!(run["verdict"], "invalid", "{run:#}");
    assert_eq!(pause["status"]["status"], "unsafe", "{pause:#}");
    assert_eq!(pause["mismatch"], false);
    let library = format!("redis {}", pinned("redis"));
    assert_eq!(run["library"], library.as_str(), "{run:#}");
    let row_named = |name: &str| {
        json["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("no row {name}"))
    };
    let row = row_named("python-redis-py");
    assert_eq!(row["library"], library.as_str(), "{row:#}");
    // A library's client writes when the library says it holds the lock, and the page says so.
    assert_eq!(row["discipline"], "trusting", "{row:#}");
    let page = std::fs::read_to_string(dir.join("matrix.html")).unwrap();
    assert!(
        page.contains(">client: trusting</span>"),
        "the matrix page shows it"
    );
    assert_eq!(
        (row["server"].as_str(), row["client"].as_str()),
        (Some("redis"), Some("process"))
    );
    // A row that did not run says where its library will come from.
    let other = row_named("python-kazoo");
    assert!(other["library"]
        .as_str()
        .unwrap()
        .starts_with("not known before a run"));

    let html = std::fs::read_to_string(dir.join("matrix.html")).unwrap();
    assert!(
        html.contains(&format!("library: {library}")),
        "the page names the library"
    );
    assert!(
        html.contains("redis-py (PyPI) Lock on one redis-server"),
        "the row's sentence"
    );
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(
        md.contains(&format!("| **python-redis-py** ({library}) |")),
        "{md}"
    );
    assert!(
        md.contains(&format!(
            "- **python-redis-py** (process running {library} on redis"
        )),
        "{md}"
    );

    // The reproduce command names the stored scenario, whose adapter path is absolute:
    // running it repeats the run, wherever the store is.
    let reproduce = run["reproduce"].as_str().unwrap();
    let file = reproduce
        .strip_prefix("cargo run -- scenario ")
        .and_then(|r| r.strip_suffix(&format!(" --seed 1 --store {s}")))
        .unwrap_or_else(|| panic!("{reproduce}"));
    let text = std::fs::read_to_string(file).unwrap();
    assert!(
        text.contains("/clients/python/redis_py/adapter.py\"]") && !text.contains("\"../"),
        "{text}"
    );
    let again = tmp.path().join("again");
    let out = lockpick(&[
        "scenario",
        file,
        "--seed",
        "1",
        "--store",
        again.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));

    // Resuming reads the copy of the file in the matrix folder; the adapter's relative path
    // still resolves against the shipped file's folder, so the missing run is made.
    std::fs::remove_file(dir.join("runs/python-redis-py--client-pause--seed1.json")).unwrap();
    let out = lockpick(&[
        "matrix",
        "--resume",
        dir.to_str().unwrap(),
        "--rows",
        "python-redis-py",
        "--faults",
        "client-pause",
        "--store",
        s,
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let record: Value = serde_json::from_slice(
        &std::fs::read(dir.join("runs/python-redis-py--client-pause--seed1.json")).unwrap(),
    )
    .unwrap();
    assert!(record["error"].is_null(), "{record:#}");
    assert_eq!(record["library"], library.as_str());
}

/// The run keys `(row, column, seed)` and verdict of every run a matrix.json holds.
fn runs_of(json: &Value) -> Vec<(String, String, u64, String)> {
    let mut out: Vec<(String, String, u64, String)> = json["cells"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["runs"].as_array().unwrap().iter())
        .map(|r| {
            (
                r["row"].as_str().unwrap().to_owned(),
                r["column"].as_str().unwrap().to_owned(),
                r["seed"].as_u64().unwrap(),
                r["verdict"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    out.sort();
    out
}

fn matrix_json(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("matrix.json")).unwrap()).unwrap()
}

#[test]
fn a_matrix_run_in_three_shards_merges_into_the_whole_one() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("tiny.toml");
    std::fs::write(&file, TINY.replace("seeds = 1", "seeds = 2")).unwrap();
    let f = file.to_str().unwrap();
    let whole_store = tmp.path().join("whole");
    let out = lockpick(&["matrix", f, "--store", whole_store.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let whole = matrix_json(&only_dir(&whole_store.join("matrix")));

    // Three processes, three stores, as three CI jobs would.
    let shard_stores: Vec<PathBuf> = (1..=3).map(|k| tmp.path().join(format!("s{k}"))).collect();
    let mut shard_runs = Vec::new();
    for (k, store) in (1..=3).zip(&shard_stores) {
        let shard = format!("{k}/3");
        let out = lockpick(&[
            "matrix",
            f,
            "--shard",
            &shard,
            "--store",
            store.to_str().unwrap(),
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "shard {shard}: {}",
            stderr(&out)
        );
        let json = matrix_json(&only_dir(&store.join("matrix")));
        assert_eq!(json["shard"], shard.as_str());
        shard_runs.extend(runs_of(&json));
    }
    // Every run of the matrix was made by exactly one shard.
    let mut keys: Vec<_> = shard_runs.iter().map(|(r, c, s, _)| (r, c, s)).collect();
    keys.sort();
    let whole_runs = runs_of(&whole);
    let whole_keys: Vec<_> = whole_runs.iter().map(|(r, c, s, _)| (r, c, s)).collect();
    assert_eq!(
        keys, whole_keys,
        "the shards made the whole matrix's runs, each once"
    );

    let merged_store = tmp.path().join("merged");
    let mut args = vec!["merge".to_owned()];
    args.extend(shard_stores.iter().map(|s| s.display().to_string()));
    args.extend(["--store".to_owned(), merged_store.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = lockpick(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let merged_dir = only_dir(&merged_store.join("matrix"));
    let merged = matrix_json(&merged_dir);
    assert_eq!(merged["shard"], Value::Null);
    assert_eq!(merged["missing_shards"].as_array().unwrap().len(), 0);
    // The same cells and the same runs, with the verdicts the shards recorded.
    let cells = |j: &Value| -> Vec<(String, String)> {
        j["cells"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["row"].to_string(), c["column"].to_string()))
            .collect()
    };
    assert_eq!(cells(&merged), cells(&whole));
    shard_runs.sort();
    assert_eq!(runs_of(&merged), shard_runs);
    // The cells whose verdict does not depend on timing agree with the whole matrix's.
    for column in ["none", "pause"] {
        assert_eq!(
            cell(&merged, column)["status"],
            cell(&whole, column)["status"],
            "{column}"
        );
    }
    // Each run's folder came along, at the place its record names.
    for c in merged["cells"].as_array().unwrap() {
        for r in c["runs"].as_array().unwrap() {
            let run = r["run"].as_str().unwrap();
            assert!(
                merged_store.join(run).join("results.json").is_file(),
                "{run}"
            );
        }
    }
    assert!(merged_dir.join("matrix.html").is_file());

    // A missing shard is reported, and its runs count as not made.
    let partial = tmp.path().join("partial");
    let out = lockpick(&[
        "merge",
        shard_stores[0].to_str().unwrap(),
        shard_stores[2].to_str().unwrap(),
        "--store",
        partial.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("shard 2/3 was not given"),
        "{}",
        stderr(&out)
    );
    let json = matrix_json(&only_dir(&partial.join("matrix")));
    assert_eq!(json["missing_shards"], serde_json::json!(["2/3"]));
    let made = runs_of(&json).len();
    assert!(made < whole_runs.len(), "{made} runs without shard 2");
    for c in json["cells"].as_array().unwrap() {
        if c["runs"].as_array().unwrap().is_empty() {
            assert_eq!(c["status"]["status"], "not-run", "{c:#}");
        }
    }

    // Shards of another matrix file are refused, naming the shard.
    let other = tmp.path().join("other.toml");
    std::fs::write(
        &other,
        TINY.replace("seeds = 1", "seeds = 2")
            .replace("tiny", "other"),
    )
    .unwrap();
    let other_store = tmp.path().join("other-store");
    let out = lockpick(&[
        "matrix",
        other.to_str().unwrap(),
        "--shard",
        "2/3",
        "--rows",
        "redis",
        "--faults",
        "none",
        "--store",
        other_store.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = lockpick(&[
        "merge",
        shard_stores[0].to_str().unwrap(),
        other_store.to_str().unwrap(),
        "--store",
        tmp.path().join("refused").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("shard 2/3") && stderr(&out).contains("another matrix file"),
        "{}",
        stderr(&out)
    );
    assert!(
        !tmp.path().join("refused").exists(),
        "nothing written for a refused merge"
    );
}

/// `server_instance` of the run a matrix run record points at.
fn instance_of(store: &Path, run: &Value) -> Value {
    let dir = store.join(run["run"].as_str().expect("the run has a folder"));
    let state: Value =
        serde_json::from_slice(&std::fs::read(dir.join("run.json")).unwrap()).unwrap();
    state["server_instance"].clone()
}

#[test]
fn a_rows_runs_share_one_start_of_its_servers_unless_fresh_servers_are_asked_for() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("tiny.toml");
    // A crash column first in the file: the row's other cells run before it, so all four
    // share one start, and the crash's restart falls after the row.
    let with_crash = TINY
        .replacen(
            "[[column]]\nname = \"none\"",
            "[[column]]\nname = \"crash\"\nabout = \"a node crash\"\nfault = \"node-crash\"\n\
             nodes = \"random-one\"\nat_ms = [200, 400]\nduration = 0\n\n\
             [[column]]\nname = \"none\"",
            1,
        )
        .replace(
            "expect.none = \"valid: no fault\"",
            "expect.none = \"valid: no fault\"\nexpect.crash = \"invalid: the key is lost\"",
        );
    assert!(with_crash.contains("name = \"crash\""));
    std::fs::write(&file, with_crash).unwrap();
    let f = file.to_str().unwrap();
    let mut verdicts = Vec::new();
    for fresh in [false, true] {
        let store = tmp.path().join(if fresh { "fresh" } else { "reuse" });
        let mut args = vec!["matrix", f, "--store", store.to_str().unwrap()];
        if fresh {
            args.push("--fresh-servers");
        }
        let out = lockpick(&args);
        // 5: the crash cell may disagree with its guess; that is not what this test is about.
        assert!(matches!(out.status.code(), Some(0 | 5)), "{}", stderr(&out));
        let json = matrix_json(&only_dir(&store.join("matrix")));
        let runs: Vec<&Value> = json["cells"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|c| c["runs"].as_array().unwrap())
            .collect();
        assert_eq!(runs.len(), 4);
        let instances: Vec<Value> = runs.iter().map(|r| instance_of(&store, r)).collect();
        let mut ids: Vec<&str> = instances
            .iter()
            .map(|i| i["id"].as_str().unwrap())
            .collect();
        let mut served: Vec<u64> = instances
            .iter()
            .map(|i| i["run"].as_u64().unwrap())
            .collect();
        ids.sort();
        ids.dedup();
        served.sort();
        if fresh {
            assert_eq!(ids.len(), 4, "every run its own servers: {instances:?}");
            assert_eq!(served, [1, 1, 1, 1]);
        } else {
            assert_eq!(ids.len(), 1, "one start for the row: {instances:?}");
            assert_eq!(served, [1, 2, 3, 4]);
            let crash = runs.iter().position(|r| r["column"] == "crash").unwrap();
            assert_eq!(instances[crash]["run"], 4, "the crash cell ran last");
        }
        let mut v: Vec<(String, String)> = runs
            .iter()
            .filter(|r| r["column"] != "crash")
            .map(|r| {
                (
                    r["column"].as_str().unwrap().to_owned(),
                    r["verdict"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        v.sort();
        verdicts.push(v);
    }
    assert_eq!(verdicts[0], verdicts[1], "reuse changed a verdict");
}

#[test]
fn jobs_make_a_seeds_runs_at_once_each_job_on_servers_of_its_own() {
    // Two jobs over the tiny matrix's 3 cells x 2 seeds: both jobs start at once (the seed's
    // first two runs), so exactly two server instances serve the runs, each reset between
    // its own runs; every run is recorded once, and the command recorded says --jobs 2.
    // Verdicts are not this test's business (two runs at once on 2 cores with 300 ms
    // leases may miss a lease).
    let (_tmp, file, store) = tiny_in_tmp();
    let (f, s) = (file.to_str().unwrap(), store.to_str().unwrap());
    let out = lockpick(&["matrix", f, "--seeds", "2", "--jobs", "2", "--store", s]);
    assert!(matches!(out.status.code(), Some(0 | 5)), "{}", stderr(&out));
    let json = matrix_json(&only_dir(&store.join("matrix")));
    let mut keys: Vec<(String, u64)> = Vec::new();
    let mut by_instance: std::collections::BTreeMap<String, Vec<u64>> = Default::default();
    for cell in json["cells"].as_array().unwrap() {
        for run in cell["runs"].as_array().unwrap() {
            assert!(run["error"].is_null(), "{run}");
            keys.push((
                run["column"].as_str().unwrap().to_owned(),
                run["seed"].as_u64().unwrap(),
            ));
            let inst = instance_of(&store, run);
            (by_instance.entry(inst["id"].as_str().unwrap().to_owned()))
                .or_default()
                .push(inst["run"].as_u64().unwrap());
        }
    }
    keys.sort();
    let want: Vec<(String, u64)> = ["none", "pause", "short-pause"]
        .iter()
        .flat_map(|c| [1, 2].map(|seed| (c.to_string(), seed)))
        .collect();
    assert_eq!(keys, want, "every run once");
    assert_eq!(
        by_instance.len(),
        2,
        "one instance per job: {by_instance:?}"
    );
    for (id, served) in &by_instance {
        let mut served = served.clone();
        served.sort();
        let n = served.len() as u64;
        assert_eq!(served, (1..=n).collect::<Vec<_>>(), "instance {id}");
    }
    assert!(
        json["command"].as_str().unwrap().contains("--jobs 2"),
        "{}",
        json["command"]
    );
}

#[test]
fn a_row_not_selected_is_still_checked_before_any_run() {
    // libraries.toml with one row's `init` of the wrong type (its adapter declares `fenced` a
    // boolean), run for another row only: refused at once, naming the bad row's line and field,
    // and nothing is run or written.
    let tmp = tempfile::tempdir().unwrap();
    let repo = env!("CARGO_MANIFEST_DIR");
    let text = std::fs::read_to_string(Path::new(repo).join("scenarios/matrix/libraries.toml"))
        .unwrap()
        .replace("\"../../clients/", &format!("\"{repo}/clients/"));
    // The trusting row's client table ends with its init (the documented twin's goes on).
    let good = "init = { fenced = true } }";
    assert_eq!(text.matches(good).count(), 1);
    let file = tmp.path().join("libraries.toml");
    std::fs::write(&file, text.replace(good, "init = { fenced = \"yes\" } }")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let name = lines
        .iter()
        .position(|l| *l == "name = \"java-redisson-fenced\"")
        .unwrap();
    let row_line = (0..name).rev().find(|&i| lines[i] == "[[row]]").unwrap() + 1;
    let store = tmp.path().join("store");
    let out = lockpick(&[
        "matrix",
        file.to_str().unwrap(),
        "--rows",
        "python-redis-py",
        "--faults",
        "none",
        "--seeds",
        "1",
        "--store",
        store.to_str().unwrap(),
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains(&format!(
            "libraries.toml:{row_line}: field `row.client.init.fenced`: row \"java-redisson-fenced\": a string (\"yes\") is not allowed; allowed: a boolean"
        )),
        "{err}"
    );
    assert!(!store.exists(), "nothing written: {err}");
}

#[test]
fn until_adds_seeds_to_a_safe_cell_until_its_bound_and_stops_an_unsafe_one_at_its_violation() {
    let (tmp, file, store) = tiny_in_tmp();
    let (f, s) = (file.to_str().unwrap(), store.to_str().unwrap());
    let only = ["--faults", "none,pause", "--max-seeds", "12"];
    let mut args = vec!["matrix", f, "--store", s, "--until", "50%"];
    args.extend(only);
    let out = lockpick(&args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let dir = only_dir(&store.join("matrix"));
    let read = || -> Value {
        serde_json::from_slice(&std::fs::read(dir.join("matrix.json")).unwrap()).unwrap()
    };
    let json = read();
    assert_eq!(json["until"]["bound"], 0.5, "{}", json["until"]);
    // No violation without a fault: 0 of 5 bounds the rate at 52%, 0 of 6 at 46%.
    let none = cell(&json, "none");
    assert_eq!(none["status"]["status"], "safe", "{none:#}");
    assert_eq!(none["runs"].as_array().unwrap().len(), 6, "{none:#}");
    assert!(none["rate"]["high"].as_f64().unwrap() <= 0.5, "{none:#}");
    // The pause cell stops at its first violation, whichever seed it came on.
    let pause = cell(&json, "pause");
    let verdicts: Vec<&str> = pause["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts.last(), Some(&"invalid"), "{verdicts:?}");
    assert!(
        verdicts[..verdicts.len() - 1]
            .iter()
            .all(|v| *v != "invalid"),
        "{verdicts:?}"
    );

    // A tighter bound on resume adds seeds to the safe cell only, and makes no run again:
    // 0 of 8 bounds it at 37%.
    let md = tmp.path().join("until.md");
    let mut args = vec!["matrix", "--resume", dir.to_str().unwrap(), "--store", s];
    args.extend(["--until", "40%", "--markdown", md.to_str().unwrap()]);
    args.extend(only);
    let out = lockpick(&args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let ran: Vec<&str> = err.lines().filter(|l| l.contains(" seed ")).collect();
    assert_eq!(ran.len(), 2, "{err}");
    assert!(ran[0].starts_with("redis × none seed 7: "), "{err}");
    assert!(ran[1].starts_with("redis × none seed 8: "), "{err}");
    assert_eq!(cell(&read(), "none")["runs"].as_array().unwrap().len(), 8);
    let md = std::fs::read_to_string(md).unwrap();
    assert!(
        md.contains("**Seeds until sure:** each cell ran 1 seed(s), then more until it had a violation or the 95% upper bound of its violation rate was at most 40% (at most 12 seeds, and not for a cell too few of whose runs were exposed to get there within them); the cells below have "),
        "{md}"
    );
    assert!(md.contains("safe&nbsp;0/8&nbsp;≤37%"), "{md}");
    let html = std::fs::read_to_string(dir.join("matrix.html")).unwrap();
    assert!(
        html.contains("1 seed(s) per cell, then more until each cell had a violation or the 95% upper bound of its violation rate was at most 40% (at most 12 seeds, and not for a cell too few of whose runs were exposed to get there within them)"),
        "matrix.html does not say how its seeds were chosen"
    );
    // The short-pause cell, left out by --faults, has no run: still short of the bound.
    assert!(
        md.contains("**Incomplete:** 1 cell(s) still short of it"),
        "{md}"
    );

    // Resumed without --until, the folder's bound is kept, and said: nothing left to run.
    let args = [
        "matrix",
        "--resume",
        dir.to_str().unwrap(),
        "--store",
        s,
        "--faults",
        "none,pause",
    ];
    let out = lockpick(&args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("resuming with the matrix's recorded --until 40% --max-seeds 12 (give --until and --max-seeds to change them)"),
        "{err}"
    );
    assert!(!err.lines().any(|l| l.contains(" seed ")), "{err}");

    // A bound out of range is refused before anything runs.
    let out = lockpick(&["matrix", f, "--store", s, "--until", "100%"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("100% is out of range; allowed: above 0% and below 100%"),
        "{}",
        stderr(&out)
    );
}

/// `bash scripts/publish-matrix` in a clone of this checkout (its script as it is here): `args`,
/// with the store and the builds folder given.
fn publish(repo: &Path, store: &Path, builds: &Path, args: &[&str]) -> (i32, String) {
    let out = std::process::Command::new("bash")
        .arg("scripts/publish-matrix")
        .args(args)
        .current_dir(repo)
        .env("STORE", store)
        .env("BUILDS", builds)
        .env_remove("LOCKPICK")
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), both(&out))
}

#[test]
fn a_publication_carried_over_sessions_resumes_from_its_archive_alone_and_publishes_when_complete()
{
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let source = format!("file://{}", env!("CARGO_MANIFEST_DIR"));
    let cloned = std::process::Command::new("git")
        .args(["clone", "-q", "--depth", "1", &source])
        .arg(&repo)
        .status()
        .unwrap();
    assert!(cloned.success());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/publish-matrix");
    std::fs::copy(&script, repo.join("scripts/publish-matrix")).unwrap();
    std::fs::write(repo.join("tiny.toml"), TINY).unwrap();
    let builds = tmp.path().join("builds");
    let s1 = tmp.path().join("s1");

    let (code, out) = publish(
        &repo,
        &s1,
        &builds,
        &["start", "docs/tiny.md", "tiny.toml", "--", "--seeds", "3"],
    );
    assert_eq!(code, 0, "{out}");
    let state = repo.join("docs/in-progress/tiny");
    let commit = std::fs::read_to_string(state.join("commit")).unwrap();
    // The commit's build, as the script would have made it in a worktree: this test's.
    let bin = builds.join(commit.trim()).join("target/release");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_lockpick"), bin.join("lockpick")).unwrap();

    // A session whose time runs out at once: stopped as Ctrl-C stops it, nothing lost.
    let (code, out) = publish(
        &repo,
        &s1,
        &builds,
        &["continue", "docs/tiny.md", "--minutes", "0.01"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("not complete") || out.contains("stopped before the matrix made its folder"),
        "{out}"
    );
    // A session that makes one column's runs.
    let (code, out) = publish(
        &repo,
        &s1,
        &builds,
        &[
            "continue",
            "docs/tiny.md",
            "--minutes",
            "5",
            "--",
            "--faults",
            "none",
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("those rows or faults are complete"), "{out}");
    assert!(state.join("matrix.tar.gz").is_file());
    assert!(
        !repo.join("docs/tiny.md").exists(),
        "no page before the matrix is complete"
    );

    // The next session's machine has none of the first's store: the archive alone carries the
    // runs over, and only the missing ones are made.
    std::fs::remove_dir_all(&s1).unwrap();
    let s2 = tmp.path().join("s2");
    let (code, out) = publish(
        &repo,
        &s2,
        &builds,
        &["continue", "docs/tiny.md", "--minutes", "5"],
    );
    // 5: a cell disagreed with its expectation, which a loaded machine can make of these
    // 300 ms leases; the page is written either way, and the verdicts are not this test's.
    assert!(code == 0 || code == 5, "{out}");
    let made: Vec<&str> = (out.lines())
        .filter(|l| l.contains(" seed ") && l.contains("; reproduce: "))
        .collect();
    assert!(
        !made.iter().any(|l| l.starts_with("redis × none ")),
        "the none column's runs came from the archive: {out}"
    );
    assert_eq!(made.len(), 6, "{out}");
    assert!(out.contains("published docs/tiny.md"), "{out}");
    assert!(!state.exists(), "the in-progress folder is removed");
    let page = std::fs::read_to_string(repo.join("docs/tiny.md")).unwrap();
    assert!(
        page.contains("target/release/lockpick matrix tiny.toml --seeds 3 --markdown docs/tiny.md"),
        "{page}"
    );
    let json: Value =
        serde_json::from_slice(&std::fs::read(repo.join("docs/tiny.matrix.json")).unwrap())
            .unwrap();
    let runs = runs_of(&json);
    assert_eq!(runs.len(), 9, "{runs:?}");
    let version = lockpick(&["--version"]);
    assert_eq!(
        format!("lockpick {}", json["lockpick_version"].as_str().unwrap()),
        String::from_utf8_lossy(&version.stdout).trim()
    );
}
