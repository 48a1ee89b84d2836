//! The Kubernetes manifests in `deploy/k8s/` against the Kubernetes API's own schema
//! (`kubernetes-validate --strict`, installed by scripts/setup into tools/k8s/.venv with the
//! schemas inside the package, so nothing is fetched): a misspelt field or a wrong type in a
//! manifest fails here, not on a user's cluster.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The validator, or `None` (said loudly) when setup has not installed it; in CI it must be.
fn validator() -> Option<PathBuf> {
    let bin = root().join("tools/k8s/.venv/bin/kubernetes-validate");
    if bin.is_file() {
        return Some(bin);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "kubernetes-validate is not installed: run `bash scripts/setup`"
    );
    eprintln!("SKIPPED: kubernetes-validate not installed; `bash scripts/setup` installs it");
    None
}

fn validate(bin: &Path, file: &Path) -> std::process::Output {
    Command::new(bin)
        .args(["--strict", "--kubernetes-version", "1.33.0"])
        .arg(file)
        .output()
        .expect("the validator runs")
}

#[test]
fn the_matrix_jobs_validate_against_the_kubernetes_schema() {
    let Some(bin) = validator() else { return };
    let manifests: Vec<PathBuf> = std::fs::read_dir(root().join("deploy/k8s"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    assert!(manifests.len() >= 2, "{manifests:?}");
    for file in &manifests {
        let out = validate(&bin, file);
        assert!(
            out.status.success(),
            "{}: {}{}",
            file.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The validator is alive: a misspelt field of the same Job fails.
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.yaml");
    let text = std::fs::read_to_string(root().join("deploy/k8s/matrix-job.yaml")).unwrap();
    assert!(text.contains("completionMode: Indexed"));
    std::fs::write(&broken, text.replace("  completions: ", "  completion: ")).unwrap();
    let out = validate(&bin, &broken);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("'completion' was unexpected"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
