//! Porcupine's times on the same files, for the side-by-side columns of `lin_porcupine`: builds
//! `tools/porcupine-bench` (a Go program pinning Porcupine by its go.mod and go.sum) into the
//! target folder and runs it. Go's build cache for it lives there too; modules are never
//! downloaded here (`GOPROXY=off`): `scripts/setup` fetches the pinned one. When Go or the
//! module is missing this says why and the bench goes on with lockpick's figures alone.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Porcupine's results: a description of the run, and per file its verdict and median time.
pub struct Porcupine {
    /// Porcupine's version, Go's, GOMAXPROCS and the call timed, as the Go program prints them.
    pub about: String,
    pub files: HashMap<String, (bool, Duration)>,
}

fn go() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("go"))
            .find(|p| p.is_file())
    });
    // Where scripts/setup expects it when PATH lacks it.
    on_path.or_else(|| Some(PathBuf::from("/usr/local/go/bin/go")).filter(|p| p.is_file()))
}

/// The target folder's profile directory this bench runs from (target/release).
fn profile_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    // target/release/deps/lin_porcupine-<hash>
    Some(exe.parent()?.parent()?.to_path_buf())
}

fn build(source: &Path) -> Result<PathBuf, String> {
    let go = go().ok_or("no `go` on PATH nor in /usr/local/go/bin")?;
    let out = profile_dir()
        .ok_or("cannot tell the target folder")?
        .join("porcupine-bench");
    let bin = out.join("porcupine-bench");
    let status = Command::new(&go)
        .args(["build", "-mod=readonly", "-trimpath", "-o"])
        .arg(&bin)
        .arg(".")
        .current_dir(source)
        .env("GOCACHE", out.join("go-build"))
        .env("GOPROXY", "off")
        .env("GOTOOLCHAIN", "local")
        .env("GOFLAGS", "-buildvcs=false")
        .output()
        .map_err(|e| format!("{}: {e}", go.display()))?;
    if !status.status.success() {
        return Err(format!(
            "go build in {} failed (is the pinned module fetched? run scripts/setup):\n{}",
            source.display(),
            String::from_utf8_lossy(&status.stderr).trim_end()
        ));
    }
    Ok(bin)
}

/// Builds and runs the Go program over `data` with `runs` checks per file. `Err` says why
/// there are no Porcupine figures; a Porcupine verdict that differs from expected.tsv panics.
pub fn run(data: &Path, runs: usize, filter: Option<&str>) -> Result<Porcupine, String> {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/porcupine-bench");
    let bin = build(&source)?;
    let mut cmd = Command::new(&bin);
    cmd.arg("-dir").arg(data).arg("-runs").arg(runs.to_string());
    if let Some(f) = filter {
        cmd.arg(f);
    }
    let out = cmd
        .output()
        .map_err(|e| format!("{}: {e}", bin.display()))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => {}
        Some(1) => panic!("Porcupine disagrees with expected.tsv:\n{stderr}"),
        _ => return Err(format!("{} failed: {}", bin.display(), stderr.trim_end())),
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut about = String::new();
    let mut files = HashMap::new();
    for line in stdout.lines() {
        if let Some(comment) = line.strip_prefix("# ") {
            about = comment.to_string();
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let [file, verdict, ns, _runs] = cols[..] else {
            return Err(format!("unexpected line from {}: {line}", bin.display()));
        };
        let ns: u64 = ns
            .parse()
            .map_err(|e| format!("{}: bad time in {line:?}: {e}", bin.display()))?;
        files.insert(
            file.to_string(),
            (verdict == "linearizable", Duration::from_nanos(ns)),
        );
    }
    Ok(Porcupine { about, files })
}
