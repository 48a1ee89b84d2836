//! The suite's outputs from hand-built records: the JUnit file validates against the schema CI
//! systems read (docs/junit.xsd, checked with xmllint) and says what failed; the trend page
//! marks the nights whose outcome flipped.

use lockpick_reports::{
    junit_xml, read_suite_history, render_suite_page, write_suite_record, CaseStatus, SuiteCase,
    SuiteRecord, SUITE_DIR, SUITE_VERSION,
};
use std::path::{Path, PathBuf};
use std::process::Command;

fn case(scenario: &str, seed: u64, status: CaseStatus, verdict: Option<&str>) -> SuiteCase {
    SuiteCase {
        scenario: scenario.to_owned(),
        seed,
        expected: "invalid".to_owned(),
        status,
        verdict: verdict.map(str::to_owned),
        message: match status {
            CaseStatus::Passed => String::new(),
            CaseStatus::Mismatch => format!(
                "{scenario} seed {seed}: VALID (expected invalid)\nno violation was found: \
                 the faults did not break the lock in this run"
            ),
            CaseStatus::Error => {
                "failed to start redis-server n1: address in use <&> \"x\"\u{1b}[31m".to_owned()
            }
            CaseStatus::Skipped => "not run: the time budget of 60 s was spent".to_owned(),
        },
        reproduce: format!("cargo run -- scenario {scenario} --seed {seed}"),
        run: verdict.map(|_| format!("{scenario}/20261124T010000Z-seed{seed}")),
        secs: 6.25,
        ops: 1200,
    }
}

fn record(started: &str, cases: Vec<SuiteCase>) -> SuiteRecord {
    SuiteRecord {
        v: SUITE_VERSION,
        started: started.to_owned(),
        secs: 42.5,
        lockpick_version: "0.1.0".to_owned(),
        command: "cargo run -- suite --seeds 2".to_owned(),
        seeds: 2,
        interrupted: false,
        shard: None,
        missing_shards: Vec::new(),
        cases,
    }
}

fn schema() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/junit.xsd")
}

/// Validates `xml` with xmllint against the JUnit schema; `Err` holds xmllint's complaint.
fn validate(xml: &str) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("junit.xml");
    std::fs::write(&file, xml).unwrap();
    let out = match Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(schema())
        .arg(&file)
        .output()
    {
        Ok(out) => out,
        Err(e) if std::env::var_os("CI").is_none() => {
            eprintln!(
                "SKIPPED: xmllint not found ({e}); `bash scripts/setup` installs libxml2-utils"
            );
            return Ok(());
        }
        Err(e) => panic!("xmllint is needed in CI (`bash scripts/setup`): {e}"),
    };
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn junit_of_every_case_status_validates_against_the_schema() {
    let r = record(
        "20261124T010000Z",
        vec![
            case("redis-gc-pause", 1, CaseStatus::Passed, Some("invalid")),
            case("redis-gc-pause", 2, CaseStatus::Mismatch, Some("valid")),
            case("etcd-gc-pause", 1, CaseStatus::Error, None),
            case("etcd-gc-pause", 2, CaseStatus::Skipped, None),
        ],
    );
    let xml = junit_xml(&r);
    validate(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    assert!(xml.contains(
        r#"<testsuites name="lockpick suite" tests="4" failures="1" errors="1" skipped="1""#
    ));
    // The failure names the verdict, the expectation and how to repeat the run.
    assert!(xml.contains(r#"<failure message="redis-gc-pause seed 2: VALID (expected invalid)" type="verdict-mismatch">"#));
    assert!(xml.contains("reproduce: cargo run -- scenario redis-gc-pause --seed 2"));
    // Markup and terminal escapes in an error message cannot break the file.
    assert!(xml.contains("address in use &lt;&amp;&gt;"));
    assert!(!xml.contains('\u{1b}'));
    assert!(xml.contains(r#"<skipped message="not run: the time budget of 60 s was spent"/>"#));
}

#[test]
fn the_schema_rejects_what_ci_systems_would_not_read() {
    // The schema is not a rubber stamp: a testcase without a name, or with two outcomes, fails.
    let bad = r#"<?xml version="1.0"?><testsuites><testsuite name="x" package="p" id="0" timestamp="2026-11-24T01:00:00" hostname="h" tests="1" failures="1" errors="0" time="1"><properties/><testcase classname="c" time="1"><failure type="t"/><error type="t"/></testcase><system-out/><system-err/></testsuite></testsuites>"#;
    if Command::new("xmllint").arg("--version").output().is_err() {
        eprintln!("SKIPPED: xmllint not found; `bash scripts/setup` installs libxml2-utils");
        return;
    }
    assert!(validate(bad).is_err());
}

#[test]
fn trend_page_marks_the_night_a_scenario_flipped() {
    let store = tempfile::tempdir().unwrap();
    let nights = [
        record(
            "20261122T010000Z",
            vec![
                case("redis-gc-pause", 1, CaseStatus::Passed, Some("invalid")),
                case("etcd-baseline", 1, CaseStatus::Passed, Some("valid")),
            ],
        ),
        record(
            "20261123T010000Z",
            vec![
                case("redis-gc-pause", 1, CaseStatus::Mismatch, Some("valid")),
                case("etcd-baseline", 1, CaseStatus::Passed, Some("valid")),
            ],
        ),
    ];
    for n in &nights {
        let dir = store.path().join(SUITE_DIR).join(&n.started);
        std::fs::create_dir_all(&dir).unwrap();
        write_suite_record(&dir, n).unwrap();
    }
    // A suite killed before it wrote its record is listed as such, not as a crash of the page.
    std::fs::create_dir_all(store.path().join(SUITE_DIR).join("20261124T010000Z")).unwrap();
    let (records, unreadable) = read_suite_history(store.path());
    assert_eq!(records, nights.to_vec());
    assert_eq!(unreadable.len(), 1, "{unreadable:?}");
    // minijinja escapes `/` in values as `&#x2f;`, which browsers read back as `/`.
    let html = render_suite_page(&records, &unreadable)
        .unwrap()
        .replace("&#x2f;", "/");
    assert!(html.contains("1 flip(s)."), "{html}");
    let row = html
        .split("<tr class=\"scenario\"")
        .find(|r| r.contains("data-scenario=\"redis-gc-pause\""))
        .unwrap();
    assert!(row.contains("fail-cell flip"), "{row}");
    assert!(row.contains("href=\"../../redis-gc-pause/20261124T010000Z-seed1/report.html\""));
    let steady = html
        .split("<tr class=\"scenario\"")
        .find(|r| r.contains("data-scenario=\"etcd-baseline\""))
        .unwrap();
    assert!(!steady.contains("flip"), "{steady}");
}
