//! The test tiers (`.config/tiers.toml`) cover the workspace: every test binary on disk (each
//! crate's unit tests, each binary's, each integration test) is in exactly one tier, and every
//! binary a tier names exists, so `scripts/test` with no tier, which is what CI runs, runs
//! every test there is.

use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Tiers {
    version: u32,
    tier: BTreeMap<String, Tier>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Tier {
    needs: String,
    binaries: Vec<String>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn manifest(dir: &Path) -> toml::Table {
    let path = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    text.parse()
        .unwrap_or_else(|e| panic!("{path:?}: not TOML: {e}"))
}

fn stems(dir: &Path, ext: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect()
}

/// The test binaries of the package in `dir`, by nextest's binary id, as Cargo's target
/// auto-discovery finds them (lockpick declares only `[[bin]]` and `[[bench]]` targets).
fn package_binaries(dir: &Path) -> Vec<String> {
    let toml = manifest(dir);
    let package = toml["package"]["name"].as_str().unwrap().to_owned();
    let test_tables = toml.get("test").and_then(|t| t.as_array());
    assert!(
        test_tables.is_none(),
        "{dir:?}/Cargo.toml declares [[test]] targets: teach tests/tiers.rs to read them"
    );
    let mut ids = Vec::new();
    if dir.join("src/lib.rs").is_file() {
        ids.push(package.clone());
    }
    let bins: Vec<String> = match toml.get("bin").and_then(|b| b.as_array()) {
        Some(bins) => bins
            .iter()
            .map(|b| b["name"].as_str().unwrap().to_owned())
            .collect(),
        None if dir.join("src/main.rs").is_file() => vec![package.clone()],
        None => Vec::new(),
    };
    let mut bins = bins;
    bins.extend(stems(&dir.join("src/bin"), "rs"));
    ids.extend(bins.iter().map(|b| format!("{package}::bin/{b}")));
    ids.extend(
        stems(&dir.join("tests"), "rs")
            .into_iter()
            .map(|t| format!("{package}::{t}")),
    );
    if let Ok(entries) = std::fs::read_dir(dir.join("tests")) {
        for e in entries.flatten() {
            if e.path().join("main.rs").is_file() {
                ids.push(format!("{package}::{}", e.file_name().to_string_lossy()));
            }
        }
    }
    ids
}

fn workspace_binaries() -> BTreeSet<String> {
    let root = root();
    let toml = manifest(&root);
    let members = toml["workspace"]["members"].as_array().unwrap();
    let mut dirs = vec![root.clone()];
    dirs.extend(members.iter().map(|m| root.join(m.as_str().unwrap())));
    let mut all = BTreeSet::new();
    for dir in dirs {
        for id in package_binaries(&dir) {
            assert!(all.insert(id.clone()), "{id} found twice");
        }
    }
    all
}

fn tiers() -> Tiers {
    let path = root().join(".config/tiers.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    toml::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

#[test]
fn every_test_binary_is_in_exactly_one_tier_and_every_named_binary_exists() {
    let tiers = tiers();
    assert_eq!(tiers.version, 1);
    let on_disk = workspace_binaries();
    assert!(on_disk.len() > 40, "{on_disk:?}");
    let mut tier_of: BTreeMap<&str, &str> = BTreeMap::new();
    for (name, tier) in &tiers.tier {
        assert!(
            !tier.needs.trim().is_empty(),
            "tier {name} says what it needs"
        );
        assert!(!tier.binaries.is_empty(), "tier {name} has no binary");
        for id in &tier.binaries {
            if let Some(other) = tier_of.insert(id, name) {
                panic!("{id} is in two tiers, {other} and {name}");
            }
            assert!(
                on_disk.contains(id),
                "tier {name} names {id}, which is no test binary of the workspace"
            );
        }
    }
    let outside: Vec<&String> = on_disk
        .iter()
        .filter(|id| !tier_of.contains_key(id.as_str()))
        .collect();
    assert!(
        outside.is_empty(),
        "test binaries in no tier (add each to one tier in .config/tiers.toml): {outside:?}"
    );
}

#[test]
fn the_found_binaries_include_each_kind_of_target() {
    // The discovery above is what makes the check mean anything: it must see unit tests, a
    // binary's tests, integration tests of every crate, and itself.
    let on_disk = workspace_binaries();
    for id in [
        "lockpick-checker",
        "lockpick::bin/lockpick",
        "lockpick::tiers",
        "lockpick-harness::scenarios",
        "lockpick-reports::summary",
        "lockpick-checker::lock_checks",
    ] {
        assert!(on_disk.contains(id), "{id} not found in {on_disk:?}");
    }
}
