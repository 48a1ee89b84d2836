//! Running the `lockpick` binary from a test, as a user would.

// Each test binary that includes this module uses only part of it.
#![allow(dead_code)]

use std::process::{Command, Output};

/// Runs `lockpick args…` from the repository root and waits for it.
pub fn lockpick(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lockpick"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap()
}

/// What it wrote to stderr, as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
