//! A row's `note.<column>`: what the cell's runs showed that its expectation did not foresee,
//! as data ([`CellNote`]), so that no note can quote a figure its cell contradicts.
//!
//! Two forms. A plain string, for a note that types no figure about runs:
//! `note.node-crash = "the holder's 1-5 ms hold ends before the restart"`. A table, for a note
//! that names runs: `note.node-crash = { text = "{cell}: {seed 4} ...", seeds = { invalid = [4, 7] } }`
//! (one inline table: `toml` gives a dotted-key table no span to place errors at). Either text
//! may hold placeholders the renderer fills from the cell's runs (`{cell}`, `{invalid}`,
//! `{seeds:valid}`, …; the list is in `lockpick_reports`' `matrix/note_text.rs`). A count, ratio or seed of runs typed by hand is
//! refused here, at the note's line; a seed named but not borne out by the cell's runs is
//! refused when the matrix is rendered.

use super::error::MatrixError;
use crate::scenario::Source;
use lockpick_reports::matrix::{CellNote, RunVerdict};
use std::collections::BTreeMap;
use toml::Spanned;

/// A note as the file gives it. Read by hand rather than as a `toml::Value`: `toml` cannot
/// read a table (inline or dotted) into a `Spanned<toml::Value>`, and the span is what names
/// the note's line in an error.
pub(super) enum RawNote {
    Text(String),
    Table(toml::Table),
    /// Any other type, by its name, refused by [`read_note`].
    Other(&'static str),
}

impl<'de> serde::Deserialize<'de> for RawNote {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RawNote, D::Error> {
        d.deserialize_any(RawNoteVisitor)
    }
}

struct RawNoteVisitor;

impl<'de> serde::de::Visitor<'de> for RawNoteVisitor {
    type Value = RawNote;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string or a table")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawNote, E> {
        Ok(RawNote::Text(v.to_owned()))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<RawNote, A::Error> {
        // Key by key: `toml::Table`'s own reading wants keys borrowed from the file, which a
        // map handed on does not give.
        let mut map = map;
        let mut table = toml::Table::new();
        while let Some(key) = map.next_key::<String>()? {
            let value: toml::Value = map.next_value()?;
            table.insert(key, value);
        }
        Ok(RawNote::Table(table))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<RawNote, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(RawNote::Other("array"))
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<RawNote, E> {
        Ok(RawNote::Other("integer"))
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<RawNote, E> {
        Ok(RawNote::Other("integer"))
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<RawNote, E> {
        Ok(RawNote::Other("float"))
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<RawNote, E> {
        Ok(RawNote::Other("boolean"))
    }
}

/// `record` with the notes of `matrix` (the file as it is now) in place of those it was
/// written with: what a stored record (a publication's `*.matrix.json`) is rendered with, so
/// that the notes checked are the ones that would be published. The notes of cells the record
/// does not have are returned, as `(row, column)`: there is nothing to check them against.
pub fn with_file_notes(
    record: &mut lockpick_reports::matrix::MatrixRecord,
    matrix: &super::Matrix,
) -> Vec<(String, String)> {
    for cell in &mut record.cells {
        cell.note = (matrix.rows.iter())
            .find(|r| r.name == cell.row)
            .and_then(|r| r.notes.get(&cell.column).cloned());
    }
    let mut unplaced = Vec::new();
    for row in &matrix.rows {
        for column in row.notes.keys() {
            if record.cell(&row.name, column).is_none() {
                unplaced.push((row.name.clone(), column.clone()));
            }
        }
    }
    unplaced
}

/// The keys a note's table takes, for error messages.
const NOTE_KEYS: &str = "text (the note, a string), seeds (a table of verdict = [seeds])";

/// The note given as `note.<column>`, parsed and checked ([`CellNote::check`]); its errors
/// name the file, the note's line and the field.
pub(super) fn read_note(
    src: &Source,
    column: &str,
    value: &Spanned<RawNote>,
) -> Result<CellNote, MatrixError> {
    let field = format!("row.note.{column}");
    let fail = |field: &str, m: String| MatrixError::at(src, value.span(), field, m);
    let note = match value.get_ref() {
        RawNote::Text(text) => CellNote::plain(text.trim()),
        RawNote::Table(table) => {
            let mut text = None;
            let mut seeds = BTreeMap::new();
            for (key, v) in table {
                match (key.as_str(), v) {
                    ("text", toml::Value::String(t)) => text = Some(t.trim().to_owned()),
                    ("seeds", toml::Value::Table(t)) => {
                        seeds = read_seeds(t).map_err(|(f, m)| fail(&format!("{field}.{f}"), m))?
                    }
                    ("text" | "seeds", other) => {
                        return Err(fail(
                            &format!("{field}.{key}"),
                            format!(
                                "a {} is not allowed; allowed: {NOTE_KEYS}",
                                other.type_str()
                            ),
                        ))
                    }
                    (other, _) => {
                        return Err(fail(
                            &field,
                            format!("unknown key {other:?}; allowed: {NOTE_KEYS}"),
                        ))
                    }
                }
            }
            let text = text.ok_or_else(|| {
                fail(
                    &format!("{field}.text"),
                    format!("missing; allowed: {NOTE_KEYS}"),
                )
            })?;
            CellNote { text, seeds }
        }
        RawNote::Other(kind) => {
            return Err(fail(
                &field,
                format!("a {kind} is not a note; allowed: a string, or a table with {NOTE_KEYS}"),
            ))
        }
    };
    note.check().map_err(|m| fail(&field, m))?;
    Ok(note)
}

/// `seeds = { invalid = [4, 7], valid = [2] }`: each verdict's seeds; the failing key and why.
fn read_seeds(table: &toml::Table) -> Result<BTreeMap<RunVerdict, Vec<u64>>, (String, String)> {
    let mut out = BTreeMap::new();
    for (name, list) in table {
        let field = format!("seeds.{name}");
        let verdict = RunVerdict::named(name).ok_or_else(|| {
            (
                field.clone(),
                format!("no verdict {name:?}; allowed: {}", RunVerdict::names()),
            )
        })?;
        let allowed = "allowed: an array of seeds, whole numbers from 0 (seeds.invalid = [4, 7])";
        let toml::Value::Array(items) = list else {
            return Err((
                field,
                format!("a {} is not allowed; {allowed}", list.type_str()),
            ));
        };
        let seeds = (items.iter())
            .map(|i| i.as_integer().and_then(|n| u64::try_from(n).ok()))
            .collect::<Option<Vec<u64>>>()
            .ok_or_else(|| {
                (
                    field.clone(),
                    format!("not every item is a seed; {allowed}"),
                )
            })?;
        if seeds.is_empty() {
            return Err((field, format!("the array is empty; {allowed}")));
        }
        out.insert(verdict, seeds);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::matrix::file::tests::{fails, SMALL};
    use crate::matrix::parse_matrix;
    use lockpick_reports::matrix::RunVerdict;
    use std::path::Path;

    /// The small matrix with `line` as the etcd-fenced row's last line (line 20 of the file).
    fn with_note(line: &str) -> String {
        SMALL.replace(
            "expect = { none = \"valid: no fault\", pause = \"valid: the fence\" }",
            &format!(
                "expect = {{ none = \"valid: no fault\", pause = \"valid: the fence\" }}\n{line}"
            ),
        )
    }

    #[test]
    fn a_note_names_its_seeds_as_data_and_its_figures_as_placeholders() {
        let text = with_note(
            r#"note.pause = { text = "{cell}: {seed 4} granted twice; {seeds:valid} stayed valid", seeds = { invalid = [4, 7], not-exposed = [2] } }"#,
        );
        let m = parse_matrix(Path::new("m.toml"), &text).unwrap();
        let note = &m.rows[1].notes["pause"];
        assert_eq!(note.seeds[&RunVerdict::Invalid], [4, 7]);
        assert_eq!(note.claim(2), Some(RunVerdict::NotExposed));
        // Dotted keys give `toml` no span for the note's table: refused, saying what to write.
        fails(
            &with_note("note.pause.text = \"{seed 4} broke\"\nnote.pause.seeds.invalid = [4]"),
            20,
            "row.note.pause.text",
            "a note given by dotted keys is not read; allowed: a string, or one inline table",
        );
    }

    #[test]
    fn a_note_typing_a_run_figure_is_refused_at_its_line() {
        // java-redisson-fenced × clock-jump's note before notes were data.
        fails(
            &with_note(r#"note.pause = "2 runs of 3 valid (seeds 2, 3); not traced""#),
            20,
            "row.note.pause",
            "the note types a run figure by hand (\"2 runs of 3\"); a count, ratio or seed of runs must be data",
        );
        for (note, figure) in [
            ("UNSAFE 2/3, found by the check", "UNSAFE 2"),
            ("the cell says 7/10", "7/10"),
            ("broke in 1 of 10", "1 of 10"),
            ("as in seed 3", "seed 3"),
        ] {
            fails(
                &with_note(&format!("note.pause = {note:?}")),
                20,
                "row.note.pause",
                &format!("by hand ({figure:?})"),
            );
        }
        // Inside a table's text too, and a seed told about but not listed.
        fails(
            &with_note(
                r#"note.pause = { text = "{seed 4} and seed 5", seeds = { invalid = [4] } }"#,
            ),
            20,
            "row.note.pause",
            "by hand (\"seed 5\")",
        );
        fails(
            &with_note(r#"note.pause = { text = "{seed 5} broke" }"#),
            20,
            "row.note.pause",
            "{seed 5} names a run that `seeds` does not list",
        );
        // A mechanism's figures are not about runs.
        let ok = with_note(r#"note.pause = "the 1-5 ms hold ends before the 500 ms restart""#);
        assert!(parse_matrix(Path::new("m.toml"), &ok).is_ok());
    }

    #[test]
    fn a_malformed_note_names_what_is_allowed() {
        let cases = [
            (
                "note.pause = 3",
                "row.note.pause",
                "a integer is not a note",
            ),
            (
                r#"note.pause = { txt = "x" }"#,
                "row.note.pause",
                "unknown key \"txt\"; allowed: text",
            ),
            (
                r#"note.pause = { seeds = { invalid = [1] } }"#,
                "row.note.pause.text",
                "missing",
            ),
            (
                r#"note.pause = { text = "x", seeds = { broken = [1] } }"#,
                "row.note.pause.seeds.broken",
                "no verdict \"broken\"; allowed: invalid, valid",
            ),
            (
                r#"note.pause = { text = "x", seeds = { invalid = [-1] } }"#,
                "row.note.pause.seeds.invalid",
                "not every item is a seed",
            ),
            (
                r#"note.pause = "{unsafe} runs""#,
                "row.note.pause",
                "unknown placeholder {unsafe}",
            ),
            (
                r#"note.pause = "as {cell:redis-x}""#,
                "row.note.pause",
                "{cell:redis-x} names no row; the rows are: redis, etcd-fenced",
            ),
        ];
        for (line, field, needle) in cases {
            fails(&with_note(line), 20, field, needle);
        }
    }
}
