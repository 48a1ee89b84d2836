//! Running the `lockpick` binary from a test, as a user would.

// Each test binary that includes this module uses only part of it.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// Runs `lockpick args…` from the repository root and waits for it.
pub fn lockpick(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lockpick"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap()
}

/// What it wrote to stdout, then to stderr, as one text.
pub fn both(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// What it wrote to stderr, as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts that the JUnit file at `junit` validates against docs/junit.xsd (the schema CI
/// systems read). Without xmllint it says SKIPPED, except in CI, where setup installs it.
pub fn assert_junit_valid(junit: &Path) {
    match Command::new("xmllint")
        .args(["--noout", "--schema"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/junit.xsd"))
        .arg(junit)
        .output()
    {
        Ok(v) => assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stderr)),
        Err(e) if std::env::var_os("CI").is_none() => {
            eprintln!("SKIPPED schema check: xmllint not found ({e}); `bash scripts/setup`")
        }
        Err(e) => panic!("xmllint is needed in CI (`bash scripts/setup`): {e}"),
    }
}

/// The one entry of `root` (a store's only matrix or suite record, say).
pub fn only_dir(root: &Path) -> std::path::PathBuf {
    let dirs: Vec<std::path::PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs.into_iter().next().unwrap()
}
