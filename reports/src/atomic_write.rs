//! Writing a file a reader trusts whole or not at all, for this crate's pages and records (the
//! one implementation is [`lockpick_store::write_atomic`]).

use crate::error::ReportError;
use std::path::Path;

/// Writes `bytes` to `path` atomically (temporary name, fsync, rename; a symlink at `path` is
/// replaced, not followed).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    lockpick_store::write_atomic(path, bytes).map_err(|source| ReportError::Write {
        path: path.to_owned(),
        source,
    })
}
