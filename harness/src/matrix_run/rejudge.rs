//! A recorded matrix judged again by its matrix file as it is now: each cell's expectation
//! and note taken from the file, and the record told whether the expectations changed since
//! its runs began (the page says so). Nothing is run; `matrix render` and the shipped-pages
//! test use it.

use crate::matrix::{load_matrix, with_file_notes, MatrixError};
use lockpick_reports::matrix::{with_expectation, MatrixRecord};
use std::path::Path;

/// What of the file did not meet the record.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Rejudged {
    /// Notes on cells the record does not hold (row, column).
    pub unplaced_notes: Vec<(String, String)>,
    /// Cells of the record that the file has no expectation for (row, column): they keep
    /// the one they were recorded with.
    pub unjudged: Vec<(String, String)>,
}

/// `record` with the expectations and notes of the matrix file `file` as it is now.
pub fn judge_by_file(record: &mut MatrixRecord, file: &Path) -> Result<Rejudged, MatrixError> {
    let matrix = load_matrix(file)?;
    let unplaced_notes = with_file_notes(record, &matrix);
    let mut unjudged = Vec::new();
    for cell in &mut record.cells {
        let expect = (matrix.rows.iter())
            .find(|r| r.name == cell.row)
            .and_then(|r| r.expect.get(&cell.column));
        match expect {
            Some(e) => with_expectation(cell, e.verdict.name(), &e.why),
            None => unjudged.push((cell.row.clone(), cell.column.clone())),
        }
    }
    if let Some(recorded) = &mut record.expectations {
        recorded.changed_after = super::expectation_change::changed_after(recorded, file);
    }
    Ok(Rejudged {
        unplaced_notes,
        unjudged,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix_run::test_matrix::one_pause_cell;
    use lockpick_reports::matrix::{aggregate, CellHead, ExpectationSource, RunSummary};

    fn matrix_file(dir: &Path, pause: &str) -> std::path::PathBuf {
        let file = dir.join("m.toml");
        let text = one_pause_cell(pause, Some("a note written after the runs"));
        std::fs::write(&file, text).unwrap();
        file
    }

    /// One cell, redis × pause, run twice with one violation, recorded when the file
    /// expected it to stay valid; and a cell of a row the file no longer has.
    fn record() -> MatrixRecord {
        let head = |row: &str| CellHead {
            row: row.into(),
            column: "pause".into(),
            expected: "valid".into(),
            expected_why: "as recorded".into(),
            ..CellHead::default()
        };
        let runs = |row: &str| {
            vec![
                RunSummary::checked(row, "pause", 1, "invalid"),
                RunSummary::checked(row, "pause", 2, "valid"),
            ]
        };
        let mut record = MatrixRecord::of_cells(vec![
            aggregate(head("redis"), runs("redis")),
            aggregate(head("gone"), runs("gone")),
        ]);
        record.expectations = Some(ExpectationSource {
            file: "m.toml".into(),
            commit: None,
            committed: None,
            uncommitted: false,
            unknown: Some("not a checkout".into()),
            changed_after: None,
        });
        record
    }

    #[test]
    fn a_cell_is_judged_by_the_expectation_and_note_the_file_has_now() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = record();
        assert!(
            r.cells[0].mismatch,
            "recorded as expected valid, one run broke"
        );

        let file = matrix_file(dir.path(), "invalid: Kleppmann");
        let rejudged = judge_by_file(&mut r, &file).unwrap();
        let cell = &r.cells[0];
        assert_eq!(
            (cell.expected.as_str(), cell.expected_why.as_str()),
            ("invalid", "Kleppmann")
        );
        assert!(!cell.mismatch, "{cell:?}");
        assert!(cell.note.is_some(), "the file's note is on the cell");
        // The row the file no longer has keeps what it was recorded with, and is named.
        assert_eq!(
            rejudged.unjudged,
            vec![("gone".to_owned(), "pause".to_owned())]
        );
        assert!(r.cells[1].mismatch);
        // Outside a checkout git could tell nothing, when the runs began or now: the page
        // keeps saying that, and claims no commit.
        let source = r.expectations.as_ref().unwrap();
        assert!(
            source.changed_after.is_none() && source.unknown.is_some(),
            "{source:?}"
        );

        // Judged again by a file that expects it valid: the mark comes back.
        let file = matrix_file(dir.path(), "valid: nothing breaks it");
        judge_by_file(&mut r, &file).unwrap();
        assert!(r.cells[0].mismatch);
    }
}
