//! A note's text: words, and placeholders in braces that the renderer fills from the cell's
//! runs. Checked when the matrix file is read ([`CellNote::check`]) and again when a page is
//! rendered, so that a figure about runs is never typed by hand.
//!
//! The placeholders:
//! - `{cell}`: the cell's figure as the table shows it (`UNSAFE 2/10`, `safe 0/10`, `STUCK 1/10`,
//!   `not tested`); `{cell:ROW}`: the figure of row ROW's cell in the same column;
//! - `{runs}`: the runs made; `{counted}`: the runs that could show a violation (the N of
//!   `UNSAFE k/N`);
//! - `{invalid}`, `{valid}`, `{stuck}`, `{not-exposed}`, `{unknown}`, `{failed}`: how many runs
//!   showed that;
//! - `{seeds:VERDICT}`: the seeds of the runs that showed it (`4 and 7`, `1-3, 5 and 9`, `none`);
//! - `{seed N}`: `seed N`, a run the note tells about; N must be listed under the verdict its run
//!   showed in the note's `seeds` (`seeds = { invalid = [4] }`), which the renderer checks.
//!
//! `{{` and `}}` are literal braces.

use super::note::{CellNote, RunVerdict};
use super::note_figures::{run_figure, FIGURES_ALLOWED};

/// A part of a note's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    Words(String),
    Slot(Slot),
}

/// A placeholder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Slot {
    Cell,
    CellOf(String),
    Runs,
    Counted,
    Count(RunVerdict),
    Seeds(RunVerdict),
    Seed(u64),
}

/// The placeholders, for error messages.
const SLOTS: &str = "{cell}, {cell:ROW}, {runs}, {counted}, {invalid}, {valid}, {stuck}, {not-exposed}, {unknown}, {failed}, {seeds:VERDICT}, {seed N}";

/// `text` in pieces; an unclosed or unknown placeholder is refused.
pub(crate) fn pieces(text: &str) -> Result<Vec<Piece>, String> {
    let mut out = Vec::new();
    let mut words = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(['{', '}']) {
        words.push_str(&rest[..i]);
        let tail = &rest[i..];
        if let Some(after) = tail.strip_prefix("{{").or_else(|| tail.strip_prefix("}}")) {
            words.push_str(&tail[..1]);
            rest = after;
            continue;
        }
        if tail.starts_with('}') {
            return Err(format!(
                "a `}}` closes no placeholder in {:?}; write `}}}}` for a brace",
                excerpt(tail)
            ));
        }
        let end = tail.find('}').ok_or_else(|| {
            format!(
                "the placeholder {:?} is not closed; write `{{{{` for a brace",
                excerpt(tail)
            )
        })?;
        if !words.is_empty() {
            out.push(Piece::Words(std::mem::take(&mut words)));
        }
        out.push(Piece::Slot(slot(&tail[1..end])?));
        rest = &tail[end + 1..];
    }
    words.push_str(rest);
    if !words.is_empty() {
        out.push(Piece::Words(words));
    }
    Ok(out)
}

/// The placeholder named `inside` its braces.
fn slot(inside: &str) -> Result<Slot, String> {
    let verdict = |name: &str| {
        RunVerdict::named(name).ok_or_else(|| {
            format!(
                "{{{inside}}} names no verdict {name:?}; allowed: {}",
                RunVerdict::names()
            )
        })
    };
    if let Some(row) = inside.strip_prefix("cell:") {
        return match row.trim() {
            "" => Err("{cell:} names no row; allowed: {cell:ROW}".to_owned()),
            row => Ok(Slot::CellOf(row.to_owned())),
        };
    }
    if let Some(name) = inside.strip_prefix("seeds:") {
        return verdict(name.trim()).map(Slot::Seeds);
    }
    if let Some(n) = inside.strip_prefix("seed ") {
        return n.trim().parse().map(Slot::Seed).map_err(|_| {
            format!("{{{inside}}} names no seed; allowed: {{seed N}} with N a whole number")
        });
    }
    match inside {
        "cell" => Ok(Slot::Cell),
        "runs" => Ok(Slot::Runs),
        "counted" => Ok(Slot::Counted),
        other => RunVerdict::named(other)
            .map(Slot::Count)
            .ok_or_else(|| format!("unknown placeholder {{{other}}}; allowed: {SLOTS}")),
    }
}

/// The start of `text`, for an error message.
fn excerpt(text: &str) -> String {
    text.chars().take(30).collect()
}

impl CellNote {
    /// Whether the note can be rendered at all: a text that parses, types no run figure by
    /// hand ([`run_figure`]), names every seed it tells about in `seeds`, and lists no seed
    /// twice. What the cell's runs say of those seeds is checked when rendering. The error
    /// reads after "field `…`:".
    pub fn check(&self) -> Result<(), String> {
        if self.text.trim().is_empty() {
            return Err("the note's text is empty; allowed: a sentence, with placeholders for figures about runs".to_owned());
        }
        let mut listed: Vec<u64> = Vec::new();
        for (verdict, seeds) in &self.seeds {
            for seed in seeds {
                if listed.contains(seed) {
                    return Err(format!(
                        "seed {seed} is listed twice in `seeds` (again under {}); a run showed one verdict",
                        verdict.name()
                    ));
                }
                listed.push(*seed);
            }
        }
        for piece in pieces(&self.text)? {
            match piece {
                Piece::Words(words) => {
                    if let Some(figure) = run_figure(&words) {
                        return Err(format!(
                            "the note types a run figure by hand ({figure:?}); {FIGURES_ALLOWED}"
                        ));
                    }
                }
                Piece::Slot(Slot::Seed(n)) if self.claim(n).is_none() => {
                    return Err(format!(
                        "{{seed {n}}} names a run that `seeds` does not list; list it under the verdict its run showed (seeds = {{ invalid = [{n}] }}); allowed verdicts: {}",
                        RunVerdict::names()
                    ));
                }
                Piece::Slot(_) => {}
            }
        }
        Ok(())
    }

    /// The rows the note quotes with `{cell:ROW}` (none if its text does not parse).
    pub fn rows_quoted(&self) -> Vec<String> {
        (pieces(&self.text).unwrap_or_default().into_iter())
            .filter_map(|p| match p {
                Piece::Slot(Slot::CellOf(row)) => Some(row),
                Piece::Words(_) | Piece::Slot(_) => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_parse_and_braces_escape() {
        let p = pieces("{cell}: {seed 4} and {seeds:not-exposed} of {counted}; {{x}} {cell:redis}")
            .unwrap();
        assert_eq!(
            p,
            vec![
                Piece::Slot(Slot::Cell),
                Piece::Words(": ".into()),
                Piece::Slot(Slot::Seed(4)),
                Piece::Words(" and ".into()),
                Piece::Slot(Slot::Seeds(RunVerdict::NotExposed)),
                Piece::Words(" of ".into()),
                Piece::Slot(Slot::Counted),
                Piece::Words("; {x} ".into()),
                Piece::Slot(Slot::CellOf("redis".into())),
            ]
        );
        assert!(pieces("{unsafe}")
            .unwrap_err()
            .contains("unknown placeholder {unsafe}"));
        assert!(pieces("{seeds:bad}")
            .unwrap_err()
            .contains("no verdict \"bad\""));
        assert!(pieces("a {cell").unwrap_err().contains("not closed"));
        assert!(pieces("a } b")
            .unwrap_err()
            .contains("closes no placeholder"));
    }

    #[test]
    fn a_note_that_types_a_run_figure_or_names_an_unlisted_seed_is_refused() {
        let e = CellNote::plain("2 runs of 3 valid; not traced")
            .check()
            .unwrap_err();
        assert!(
            e.contains("types a run figure by hand (\"2 runs of 3\")"),
            "{e}"
        );
        assert!(e.contains("{seed N}"), "names what is allowed: {e}");
        // The same claim as data passes.
        assert_eq!(
            CellNote::plain("{valid} of {runs} valid; not traced").check(),
            Ok(())
        );
        let e = CellNote::plain("{seed 3} made no grant")
            .check()
            .unwrap_err();
        assert!(
            e.contains("{seed 3} names a run that `seeds` does not list"),
            "{e}"
        );
        let mut note = CellNote::plain("{seed 3} made no grant");
        note.seeds.insert(RunVerdict::NotExposed, vec![3]);
        assert_eq!(note.check(), Ok(()));
        note.seeds.insert(RunVerdict::Valid, vec![3]);
        assert!(note.check().unwrap_err().contains("seed 3 is listed twice"));
        // Mechanism figures are text.
        assert_eq!(CellNote::plain("the holder's 1-5 ms hold").check(), Ok(()));
    }
}
