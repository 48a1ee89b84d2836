//! Builds the allocator shim (`native/alloc_shim.c`) that lets redis-server run under
//! libfaketime, as a shared library in OUT_DIR, and tells the crate where it is
//! (`LOCKPICK_ALLOC_SHIM`), and stamps the build with the git commit it was made from
//! (`LOCKPICK_COMMIT`), which every record lockpick writes names.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    stamp_commit();
    let source = PathBuf::from("native/alloc_shim.c");
    println!("cargo:rerun-if-changed={}", source.display());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let lib = out.join("liblockpick_alloc_shim.so");
    // The cc crate finds the C compiler and its flags for the target; it builds static
    // archives only, so the link into a shared object is one more compiler call.
    let compiler = cc::Build::new()
        .pic(true)
        .opt_level(2)
        .cargo_metadata(false)
        .get_compiler();
    let status = compiler
        .to_command()
        .args(["-shared", "-fPIC", "-Wall", "-Wextra", "-o"])
        .arg(&lib)
        .arg(&source)
        .arg("-ldl")
        .status()
        .unwrap_or_else(|e| panic!("run the C compiler {:?}: {e}", compiler.path()));
    assert!(
        status.success(),
        "compile {} failed: {status}",
        source.display()
    );
    println!("cargo:rustc-env=LOCKPICK_ALLOC_SHIM={}", lib.display());
}

/// `LOCKPICK_COMMIT`: the commit of the checkout this build was made from (12 hex digits), with
/// `+changes` when tracked Rust sources or Cargo.lock differed from it at build time, or
/// `unknown` outside a git checkout. The script runs again when HEAD, the branch it names or
/// the index move, or a crate's sources change: a record must not name a commit its build
/// did not come from.
fn stamp_commit() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = manifest
        .parent()
        .expect("harness/ sits in the workspace")
        .to_owned();
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .arg("-C")
            .arg(&root)
            .args(args)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    for dir in [
        "src",
        "harness/src",
        "harness/store/src",
        "checker/src",
        "reports/src",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
    println!(
        "cargo:rerun-if-changed={}",
        root.join("Cargo.lock").display()
    );
    let stamp = match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(commit) => {
            if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
                let dir = Path::new(&dir);
                for f in ["HEAD", "index", "packed-refs"] {
                    println!("cargo:rerun-if-changed={}", dir.join(f).display());
                }
                if let Some(head) = git(&["symbolic-ref", "-q", "HEAD"]) {
                    println!("cargo:rerun-if-changed={}", dir.join(head).display());
                }
            }
            let changed = git(&[
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                "*.rs",
                "Cargo.lock",
                "*Cargo.toml",
            ])
            .is_none_or(|s| !s.is_empty());
            if changed {
                format!("{commit}+changes")
            } else {
                commit
            }
        }
        None => "unknown".to_owned(),
    };
    println!("cargo:rustc-env=LOCKPICK_COMMIT={stamp}");
}
