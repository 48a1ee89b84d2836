//! The three-valued verdict of a check, and how verdicts merge.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Outcome of a check. Merging keeps the worst: invalid > unknown > valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The history satisfies the property.
    Valid,
    /// The check could not decide (budget ran out, too little evidence).
    Unknown,
    /// The history violates the property; the violations prove it.
    Invalid,
}

impl Verdict {
    /// The worse of two verdicts.
    pub fn merge(self, other: Verdict) -> Verdict {
        self.max(other)
    }

    /// Merges any number of verdicts; no verdicts at all is valid.
    pub fn merge_all(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
        verdicts.into_iter().fold(Verdict::Valid, Verdict::merge)
    }

    /// The name as written in results and printed.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Valid => "valid",
            Verdict::Unknown => "unknown",
            Verdict::Invalid => "invalid",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::Verdict::*;
    use super::*;

    #[test]
    fn invalid_beats_unknown_beats_valid() {
        assert_eq!(Valid.merge(Unknown), Unknown);
        assert_eq!(Unknown.merge(Invalid), Invalid);
        assert_eq!(Invalid.merge(Valid), Invalid);
        assert_eq!(Verdict::merge_all([]), Valid);
        assert_eq!(Verdict::merge_all([Valid, Unknown, Valid]), Unknown);
    }
}
