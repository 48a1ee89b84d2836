//! The versions of the servers a matrix ran, as the Debian packages they come from report
//! them, for the record and the published table.

use std::process::Command;

/// `(package, version)` of each installed one; an absent one is "not installed".
pub fn server_versions() -> Vec<(String, String)> {
    lockpick_harness::backends::packages()
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
        .collect()
}
