//! What a node keeps across a crash (`[backend] persistence`).

use serde::Serialize;

/// What a Redis lock node keeps across a crash (`[backend] persistence`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Persistence {
    /// Nothing: a restarted node comes back empty.
    #[default]
    None,
    /// Append-only file with `appendfsync always`: every acknowledged write survives.
    AofAlways,
}

impl Persistence {
    pub const NAMES: &'static [&'static str] = &["none", "aof-always"];
}
