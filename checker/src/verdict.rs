//! The verdict of a check or a run, and how verdicts merge. Safety and liveness are apart:
//! `invalid` is a safety violation only (double holder, stale write, lost update, a history
//! no lock could produce); a deadlock or a lockout is `stuck`; a run no fault of which opened a
//! window for a violation is `not-exposed`, never `valid`.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Outcome of a check or a run. Merging keeps the worst, in this order:
/// invalid > stuck > unknown > not-exposed > valid. A safety violation outranks everything; a
/// deadlock is a finding with evidence, so it outranks a check that could not decide; and a
/// fault that tested nothing only matters when nothing else was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The history satisfies the property.
    Valid,
    /// No violation, but no fault of the run opened a window in which one was possible (see
    /// [`crate::exposure`]): it never took effect, or a pause ended before the holder's lease
    /// could run out, or a crashed node came back after the hold. Written `not-tested` before.
    #[serde(alias = "not-tested")]
    NotExposed,
    /// The check could not decide (budget ran out, too little evidence).
    Unknown,
    /// Liveness: clients kept asking for a free lock and nobody got it (a deadlock), or only
    /// one process got or held it (a lockout). No safety violation was found.
    Stuck,
    /// A safety violation; the violations prove it.
    Invalid,
}

impl Verdict {
    /// Every verdict, best first.
    pub const ALL: [Verdict; 5] = [
        Verdict::Valid,
        Verdict::NotExposed,
        Verdict::Unknown,
        Verdict::Stuck,
        Verdict::Invalid,
    ];

    /// The worse of two verdicts.
    pub fn merge(self, other: Verdict) -> Verdict {
        self.max(other)
    }

    /// Merges any number of verdicts; no verdicts at all is valid.
    pub fn merge_all(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
        verdicts.into_iter().fold(Verdict::Valid, Verdict::merge)
    }

    /// The name as written in results, scenario files and printed.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Valid => "valid",
            Verdict::NotExposed => "not-exposed",
            Verdict::Unknown => "unknown",
            Verdict::Stuck => "stuck",
            Verdict::Invalid => "invalid",
        }
    }

    /// The verdict of a name written by [`Verdict::name`] (or `not-tested`, the name of
    /// `not-exposed` in files written before exposure was judged).
    pub fn from_name(name: &str) -> Option<Verdict> {
        match name {
            "not-tested" => Some(Verdict::NotExposed),
            _ => Verdict::ALL.into_iter().find(|v| v.name() == name),
        }
    }

    /// The headline a run's summary prints (the matrix's cells say `UNSAFE k/N` and
    /// `STUCK k/N`).
    pub fn headline(self) -> &'static str {
        match self {
            Verdict::Valid => "VALID",
            Verdict::NotExposed => "NOT EXPOSED",
            Verdict::Unknown => "UNKNOWN",
            Verdict::Stuck => "STUCK",
            Verdict::Invalid => "INVALID",
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
    fn safety_beats_liveness_beats_unknown_beats_not_exposed_beats_valid() {
        assert_eq!(Valid.merge(Unknown), Unknown);
        assert_eq!(Unknown.merge(Invalid), Invalid);
        assert_eq!(Invalid.merge(Valid), Invalid);
        assert_eq!(
            Stuck.merge(Invalid),
            Invalid,
            "a double holder outranks a deadlock"
        );
        assert_eq!(Unknown.merge(Stuck), Stuck);
        assert_eq!(NotExposed.merge(Unknown), Unknown);
        assert_eq!(Valid.merge(NotExposed), NotExposed);
        assert_eq!(Verdict::merge_all([]), Valid);
        assert_eq!(Verdict::merge_all([Valid, Unknown, Valid]), Unknown);
    }

    #[test]
    fn names_round_trip_and_match_serde() {
        for v in Verdict::ALL {
            assert_eq!(Verdict::from_name(v.name()), Some(v));
            assert_eq!(
                serde_json::to_string(&v).unwrap(),
                format!("\"{}\"", v.name())
            );
        }
        assert_eq!(Verdict::from_name("nottested"), None);
        assert_eq!(Verdict::from_name("not-tested"), Some(NotExposed));
        assert_eq!(
            serde_json::from_str::<Verdict>("\"not-tested\"").unwrap(),
            NotExposed
        );
    }
}
