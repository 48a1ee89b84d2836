//! The versions of the servers a matrix can run, for the record and the published table: the
//! Debian packages as dpkg reports them, then the releases `scripts/setup` builds or fetches
//! (`[server] version`), as their files report them. What each row's runs actually reported is
//! recorded per row (`RowInfo::server_version`).

use crate::server::Install;
use std::path::Path;
use std::process::Command;

/// `(package or release, version)` of each; an absent one is "not installed".
pub fn server_versions() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = crate::backends::packages()
        .iter()
        .map(|p| {
            let v = Command::new("dpkg-query")
                .args(["-W", "-f", "${Version}", p])
                .output()
                .ok()
                .filter(|o| o.status.success() && !o.stdout.is_empty())
                .map_or("not installed".to_owned(), |o| {
                    String::from_utf8_lossy(&o.stdout).trim().to_owned()
                });
            ((*p).to_owned(), v)
        })
        .collect();
    for kind in crate::backends::servers() {
        for version in kind.versions() {
            let Install::Setup { path } = version.install else {
                continue;
            };
            let found = match version.setup_path(kind.name()) {
                Ok(Some(full)) => built_version(&full, kind.name()),
                Ok(None) | Err(_) => None,
            };
            out.push((
                format!("{} {} ({path})", kind.name(), version.name),
                found.unwrap_or_else(|| "not installed (bash scripts/setup)".to_owned()),
            ));
        }
    }
    out
}

/// The version of a release setup built: a binary's `--version` (its first line's last word,
/// `etcd Version: 3.6.16`), or, for a folder of jars, the version in `<kind>-<version>.jar` (or its family's, the
/// kind's name before its first `-`).
fn built_version(path: &Path, kind: &str) -> Option<String> {
    if path.is_file() {
        let out = Command::new(path).arg("--version").output().ok()?;
        let text = String::from_utf8_lossy(&out.stdout);
        return text
            .lines()
            .next()?
            .split_whitespace()
            .last()
            .map(str::to_owned);
    }
    let names: Vec<String> = std::fs::read_dir(path)
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    // A variant kind runs its family's jar: `hazelcast-unsafe` is `hazelcast-5.4.0.jar`.
    let family = kind.split('-').next().unwrap_or(kind);
    [kind, family].into_iter().find_map(|artifact| {
        let prefix = format!("{artifact}-");
        names.iter().find_map(|n| {
            let v = n.strip_prefix(&prefix)?.strip_suffix(".jar")?.to_owned();
            v.starts_with(|c: char| c.is_ascii_digit()).then_some(v)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::built_version;

    #[test]
    fn a_jar_folder_names_the_kinds_version_or_its_familys() {
        let dir = tempfile::tempdir().unwrap();
        for jar in [
            "hazelcast-5.4.0.jar",
            "zookeeper-jute-3.9.3.jar",
            "zookeeper-3.9.3.jar",
        ] {
            std::fs::write(dir.path().join(jar), b"").unwrap();
        }
        let found = |kind| built_version(dir.path(), kind);
        assert_eq!(found("hazelcast").as_deref(), Some("5.4.0"));
        assert_eq!(found("hazelcast-unsafe").as_deref(), Some("5.4.0"));
        assert_eq!(found("zookeeper").as_deref(), Some("3.9.3"));
        assert_eq!(found("etcd"), None);
    }
}
