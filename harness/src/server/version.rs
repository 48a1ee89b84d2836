//! Server versions: the releases of one server kind a scenario can pick with
//! `[server] version = "…"`. The first of a kind's list is the one Debian ships (the default);
//! the others are built or fetched by `scripts/setup` into the source tree (`servers/`), from
//! the Go module proxy or Maven Central at versions pinned there.

use std::path::{Path, PathBuf};

/// One release of a server kind that lockpick can run.
#[derive(Debug, PartialEq, Eq)]
pub struct ServerVersion {
    /// As `[server] version = …` names it: `major.minor` ("3.6"), or a whole version for a
    /// release kept for one bug of its own.
    pub name: &'static str,
    /// Where its files come from.
    pub install: Install,
}

/// Where a server version's files come from.
#[derive(Debug, PartialEq, Eq)]
pub enum Install {
    /// A Debian package: the kind's own binary (found in `PATH` or at its Debian path).
    Debian { package: &'static str },
    /// A path under the source tree that `scripts/setup` builds or fetches: a binary, or a
    /// folder of jars.
    Setup { path: &'static str },
}

/// Why a version's files could not be found; reads after "failed to".
#[derive(Debug, thiserror::Error)]
#[error("find {kind} {version} at {} (it is built by `bash scripts/setup`: run it once in the source tree)", path.display())]
pub struct NotInstalled {
    pub kind: &'static str,
    pub version: &'static str,
    pub path: PathBuf,
}

impl ServerVersion {
    /// The files of a [`Install::Setup`] version, if they are there; `Ok(None)` for a Debian
    /// one, whose binary the supervisor finds (and names its package when it cannot).
    pub fn setup_path(&self, kind: &'static str) -> Result<Option<PathBuf>, NotInstalled> {
        match self.install {
            Install::Debian { .. } => Ok(None),
            Install::Setup { path } => {
                let full = source_tree().join(path);
                if full.exists() {
                    Ok(Some(full))
                } else {
                    Err(NotInstalled {
                        kind,
                        version: self.name,
                        path: full,
                    })
                }
            }
        }
    }

    /// Whether `reported`, the version a running server gave, is a release of this one:
    /// "3.6.16" is of "3.6", "3.4.3" of "3.4.3" but "3.4.23" is not.
    pub fn matches(&self, reported: &str) -> bool {
        reported == self.name
            || reported
                .strip_prefix(self.name)
                .is_some_and(|rest| rest.starts_with('.'))
    }

    /// What to do when a server of this version reports another release.
    pub fn mismatch_hint(&self) -> String {
        match self.install {
            Install::Debian { package } => format!(
                "the installed Debian package `{package}` is another release than lockpick's list of versions names; name its version there"
            ),
            Install::Setup { path } => {
                format!("{path} is another build: run `bash scripts/setup` to rebuild the pinned one")
            }
        }
    }

    /// How listings and errors describe it: "3.4 (Debian's etcd-server)".
    pub fn describe(&self) -> String {
        match self.install {
            Install::Debian { package } => {
                format!("{} (Debian's {package}, the default)", self.name)
            }
            Install::Setup { path } => format!("{} ({path}, built by scripts/setup)", self.name),
        }
    }
}

/// The source tree lockpick was built from, where `scripts/setup` puts the servers it builds.
fn source_tree() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reported_version_matches_its_release_line_only() {
        let v = ServerVersion {
            name: "3.4",
            install: Install::Debian {
                package: "etcd-server",
            },
        };
        assert!(v.matches("3.4.23"));
        assert!(v.matches("3.4"));
        assert!(!v.matches("3.44.0"));
        assert!(!v.matches("3.6.16"));
        let pinned = ServerVersion {
            name: "3.4.3",
            install: Install::Setup {
                path: "servers/etcd-3.4.3/bin/etcd",
            },
        };
        assert!(pinned.matches("3.4.3"));
        assert!(!pinned.matches("3.4.23"));
    }

    #[test]
    fn a_missing_setup_version_names_setup() {
        let v = ServerVersion {
            name: "9.9",
            install: Install::Setup {
                path: "servers/nothing-here/bin/x",
            },
        };
        let e = v.setup_path("etcd").unwrap_err().to_string();
        assert!(
            e.contains("etcd 9.9") && e.contains("bash scripts/setup"),
            "{e}"
        );
    }
}
