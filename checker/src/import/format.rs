//! The history file formats the checker reads, and how a format is recognised.

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// `jepsen.util` log lines.
    JepsenLog,
    /// Jepsen op maps in EDN, one per line or in one vector (`history.edn`).
    JepsenEdn,
    /// lockpick's `history.jsonl`.
    Lockpick,
}

impl Format {
    /// Every format, in the order `--help` lists them.
    pub const ALL: [Format; 3] = [Format::JepsenLog, Format::JepsenEdn, Format::Lockpick];

    pub fn name(self) -> &'static str {
        match self {
            Format::JepsenLog => "jepsen-log",
            Format::JepsenEdn => "edn",
            Format::Lockpick => "lockpick",
        }
    }

    /// Recognises the format from the first line that is neither blank nor an EDN `;`
    /// comment: a JSON object is lockpick's, an EDN map, vector, list or `#` form (a record
    /// such as `#jepsen.history.Op{…}`, a discarded form) is Jepsen EDN; else a Jepsen log
    /// when one of the first lines is an operation line.
    pub fn detect(text: &str) -> Option<Format> {
        let line = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with(';'))?;
        if line
            .strip_prefix('{')
            .is_some_and(|rest| rest.trim_start().starts_with('"'))
        {
            Some(Format::Lockpick)
        } else if line.starts_with(['{', '[', '(', '#']) {
            Some(Format::JepsenEdn)
        } else if text.lines().take(50).any(super::jepsen_log::looks_like) {
            Some(Format::JepsenLog)
        } else {
            None
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A format name that is not `jepsen-log`, `edn` or `lockpick`.
#[derive(Debug, thiserror::Error)]
#[error("find history format {0:?}: known formats are jepsen-log, edn, lockpick")]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| UnknownFormat(s.to_string()))
    }
}
