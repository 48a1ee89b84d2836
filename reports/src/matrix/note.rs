//! A cell's note as data: a text whose figures about runs are placeholders the renderer fills
//! from the cell's own runs, and the seeds it names with the verdict it claims for each, which
//! the renderer checks against those runs. A note written this way cannot go stale silently:
//! a generated figure cannot disagree with its cell, and a claim about a seed that the cell's
//! runs no longer bear out refuses to render ([`super::note_render`]).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What one run of a cell showed, as a note may claim it: the run's verdict, with a valid run
/// whose fault fell short of its size told apart (it tested nothing, so a note saying "valid"
/// of it would overstate it), and a run the harness could not make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunVerdict {
    /// A safety violation.
    Invalid,
    /// No violation, and the fault reached its size.
    Valid,
    /// No safety violation, but a deadlock.
    Stuck,
    /// No fault instance opened a window for a violation: the run says nothing either way.
    NotExposed,
    /// The check could not decide.
    Unknown,
    /// The harness could not make the run.
    Failed,
}

// What a run showed is read from its record in `note_render.rs` (`verdict_of`): this module,
// which the record holds, cannot depend on it.
impl RunVerdict {
    pub const ALL: [RunVerdict; 6] = [
        RunVerdict::Invalid,
        RunVerdict::Valid,
        RunVerdict::Stuck,
        RunVerdict::NotExposed,
        RunVerdict::Unknown,
        RunVerdict::Failed,
    ];

    /// The name a matrix file and a placeholder use (`not-exposed`).
    pub fn name(self) -> &'static str {
        match self {
            RunVerdict::Invalid => "invalid",
            RunVerdict::Valid => "valid",
            RunVerdict::Stuck => "stuck",
            RunVerdict::NotExposed => "not-exposed",
            RunVerdict::Unknown => "unknown",
            RunVerdict::Failed => "failed",
        }
    }

    /// The verdict `name` names; `not-tested` is `not-exposed`'s name before exposure.
    pub fn named(name: &str) -> Option<RunVerdict> {
        match name {
            "not-tested" => Some(RunVerdict::NotExposed),
            _ => RunVerdict::ALL.into_iter().find(|v| v.name() == name),
        }
    }

    /// Every name, for error messages.
    pub fn names() -> String {
        RunVerdict::ALL.map(RunVerdict::name).join(", ")
    }
}

/// A note on a cell: `text` with placeholders (see [`super::note_text`] for the syntax), and
/// `seeds`, the runs it names by seed with the verdict it claims for them.
///
/// Stored in `matrix.json` as `{"text": …, "seeds": {"invalid": [4, 7]}}`; a record written
/// before notes were data holds a plain string, read as a text that names no seed (and then
/// checked like any other: a hand-typed run figure in it makes it stale).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "StoredNote")]
pub struct CellNote {
    pub text: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub seeds: BTreeMap<RunVerdict, Vec<u64>>,
}

impl CellNote {
    /// A note that names no seed.
    pub fn plain(text: impl Into<String>) -> CellNote {
        CellNote {
            text: text.into(),
            seeds: BTreeMap::new(),
        }
    }

    /// The verdict the note claims for `seed`, if it names it.
    pub fn claim(&self, seed: u64) -> Option<RunVerdict> {
        (self.seeds.iter())
            .find(|(_, seeds)| seeds.contains(&seed))
            .map(|(v, _)| *v)
    }
}

/// The two shapes a stored note has had.
#[derive(Deserialize)]
#[serde(untagged)]
enum StoredNote {
    Plain(String),
    Data {
        text: String,
        #[serde(default)]
        seeds: BTreeMap<RunVerdict, Vec<u64>>,
    },
}

impl From<StoredNote> for CellNote {
    fn from(stored: StoredNote) -> CellNote {
        match stored {
            StoredNote::Plain(text) => CellNote::plain(text),
            StoredNote::Data { text, seeds } => CellNote { text, seeds },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_round_trips_through_json_and_an_old_plain_one_still_reads() {
        let mut note = CellNote::plain("{cell}: {seed 4} broke");
        note.seeds.insert(RunVerdict::Invalid, vec![4, 7]);
        note.seeds.insert(RunVerdict::NotExposed, vec![2]);
        let json = serde_json::to_string(&note).unwrap();
        assert_eq!(
            json,
            r#"{"text":"{cell}: {seed 4} broke","seeds":{"invalid":[4,7],"not-exposed":[2]}}"#
        );
        assert_eq!(serde_json::from_str::<CellNote>(&json).unwrap(), note);
        assert_eq!(
            serde_json::from_str::<CellNote>(r#""runs come out valid""#).unwrap(),
            CellNote::plain("runs come out valid")
        );
        assert_eq!(note.claim(7), Some(RunVerdict::Invalid));
        assert_eq!(note.claim(3), None);
    }
}
