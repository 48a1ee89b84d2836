//! Checks made before a node is started: a usable name and an installed binary.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::error::ProcessError;

/// Node names become folder names: keep them to a safe alphabet.
pub(crate) fn validate_name(name: &str) -> Result<(), ProcessError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(ProcessError::InvalidName {
            name: name.to_string(),
        })
    }
}

/// The executable `binary` resolves to: a path as given, a bare name through `PATH`.
pub(crate) fn find_binary(binary: &Path) -> Option<PathBuf> {
    let executable = |path: &Path| {
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if binary.components().count() != 1 || binary.is_absolute() {
        return executable(binary).then(|| binary.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(binary))
        .find(|candidate| executable(candidate))
}
