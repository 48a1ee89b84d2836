//! A cell's note rendered against the cell's runs: its placeholders filled from them, and each
//! seed it names checked to be among them with the verdict it claims. A note that fails is
//! stale: the markdown publication refuses to render ([`StaleNotes`]), and the live page shows
//! it marked as stale with what disagrees instead of its text.

use super::cell::safety_counts;
use super::note::{CellNote, RunVerdict};
use super::note_text::{pieces, Piece, Slot};
use super::record::{CellStatus, CellSummary, MatrixRecord, RunSummary};
use std::fmt;

/// A note that disagrees with its cell, and each thing that does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleNote {
    pub row: String,
    pub column: String,
    pub problems: Vec<String>,
}

/// Every stale note of a matrix: why its markdown was not rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct StaleNotes(pub Vec<StaleNote>);

impl fmt::Display for StaleNotes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "render the matrix: {} note(s) disagree with their cell's runs; correct them in the matrix file (`note.<column>`), then render again (`matrix --resume DIR FILE --report-only --markdown …`)",
            self.0.len()
        )?;
        for s in &self.0 {
            write!(f, "\n  {} × {}: {}", s.row, s.column, s.problems.join("; "))?;
        }
        Ok(())
    }
}

/// The note of `cell` with its figures filled from the cell's runs, or what disagrees; `None`
/// for a cell without a note, and for a cell without runs (one a matrix run of some rows or
/// faults did not select, or not run yet): its note tells of runs this record does not have,
/// so it is neither checked nor shown. A publication runs every cell, so every note is.
pub fn rendered_note(
    cell: &CellSummary,
    record: &MatrixRecord,
) -> Option<Result<String, Vec<String>>> {
    if cell.runs.is_empty() {
        return None;
    }
    cell.note
        .as_ref()
        .map(|note| render_note(note, cell, record))
}

/// Every note of `record` that disagrees with its cell, in the record's order.
pub fn stale_notes(record: &MatrixRecord) -> Vec<StaleNote> {
    (record.cells.iter())
        .filter_map(|c| match rendered_note(c, record)? {
            Ok(_) => None,
            Err(problems) => Some(StaleNote {
                row: c.row.clone(),
                column: c.column.clone(),
                problems,
            }),
        })
        .collect()
}

/// `note` against `cell`: checked whole (every problem, not the first), then filled.
fn render_note(
    note: &CellNote,
    cell: &CellSummary,
    record: &MatrixRecord,
) -> Result<String, Vec<String>> {
    // The rules of the matrix file again: a record written by an older lockpick, or edited,
    // may hold a note that was never checked.
    let mut problems: Vec<String> = note.check().err().into_iter().collect();
    problems.extend(claim_problems(note, cell));
    let parts = pieces(&note.text).unwrap_or_default();
    let mut text = String::new();
    for part in parts {
        match part {
            Piece::Words(w) => text.push_str(&w),
            Piece::Slot(slot) => match fill(&slot, cell, record) {
                Ok(s) => text.push_str(&s),
                Err(p) => problems.push(p),
            },
        }
    }
    if problems.is_empty() {
        Ok(text)
    } else {
        Err(problems)
    }
}

/// Each seed the note names that is not among the cell's runs, or whose run showed another
/// verdict than the one claimed.
fn claim_problems(note: &CellNote, cell: &CellSummary) -> Vec<String> {
    let mut problems = Vec::new();
    for (claimed, seeds) in &note.seeds {
        for &seed in seeds {
            match cell.runs.iter().find(|r| r.seed == seed) {
                None => problems.push(format!(
                    "names seed {seed} ({}), which is not among the cell's runs ({})",
                    claimed.name(),
                    match seed_list(cell.runs.iter().map(|r| r.seed)) {
                        s if s == "none" => "it has none".to_owned(),
                        s => format!("seeds {s}"),
                    }
                )),
                Some(run) if verdict_of(run) != *claimed => problems.push(format!(
                    "says seed {seed} was {}, but the cell's run of seed {seed} is {}",
                    claimed.name(),
                    verdict_of(run).name()
                )),
                Some(_) => {}
            }
        }
    }
    problems
}

/// What `run` showed. A violation counts wherever its fault reached (as the cell counts
/// it); an unrecognised verdict string (a newer lockpick's) is unknown, never valid.
fn verdict_of(run: &RunSummary) -> RunVerdict {
    match (run.verdict.as_deref(), &run.not_exposed) {
        (None, _) => RunVerdict::Failed,
        (Some("invalid"), _) => RunVerdict::Invalid,
        (Some("stuck"), _) => RunVerdict::Stuck,
        (Some("valid"), None) => RunVerdict::Valid,
        (Some("valid" | "not-exposed" | "not-tested"), Some(_))
        | (Some("not-exposed" | "not-tested"), None) => RunVerdict::NotExposed,
        (Some(_), _) => RunVerdict::Unknown,
    }
}

/// What a placeholder stands for in `cell`.
fn fill(slot: &Slot, cell: &CellSummary, record: &MatrixRecord) -> Result<String, String> {
    let count = |v: RunVerdict| (cell.runs.iter()).filter(|r| verdict_of(r) == v).count();
    Ok(match slot {
        Slot::Cell => cell_figure(cell),
        Slot::CellOf(row) => match record.cell(row, &cell.column) {
            Some(other) => cell_figure(other),
            None => {
                return Err(format!(
                    "{{cell:{row}}} names row {row:?}, which has no cell in column {:?}",
                    cell.column
                ))
            }
        },
        Slot::Runs => cell.runs.len().to_string(),
        Slot::Counted => safety_counts(&cell.runs).1.to_string(),
        Slot::Count(v) => count(*v).to_string(),
        Slot::Seeds(v) => seed_list(
            (cell.runs.iter())
                .filter(|r| verdict_of(r) == *v)
                .map(|r| r.seed),
        ),
        Slot::Seed(n) => format!("seed {n}"),
    })
}

/// A cell's figure as the table shows it, without its interval (a note quotes the count):
/// `UNSAFE 2/10`, `safe 0/10`.
fn cell_figure(c: &CellSummary) -> String {
    match &c.status {
        CellStatus::NotApplicable(_) => "n/a".to_owned(),
        CellStatus::NotInjectable(_) => "not injectable here".to_owned(),
        CellStatus::NotRun => "not run".to_owned(),
        CellStatus::Untestable(_) => "not tested".to_owned(),
        CellStatus::NotExposed(_) => "not exposed".to_owned(),
        CellStatus::Safe { tested } => format!("safe 0/{tested}"),
        CellStatus::Unsafe { k, n } => format!("UNSAFE {k}/{n}"),
        CellStatus::UnsafeExplored { .. } => "UNSAFE (explore)".to_owned(),
        CellStatus::Stuck { k, n } => format!("STUCK {k}/{n}"),
        CellStatus::Unknown(_) => "unknown".to_owned(),
    }
}

/// Seeds in order for people, three or more consecutive ones as a range: `1-3, 5 and 9`;
/// `none` when there are none.
fn seed_list(seeds: impl Iterator<Item = u64>) -> String {
    let mut seeds: Vec<u64> = seeds.collect();
    seeds.sort_unstable();
    seeds.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < seeds.len() {
        let mut j = i;
        while j + 1 < seeds.len() && seeds[j + 1] == seeds[j] + 1 {
            j += 1;
        }
        if j >= i + 2 {
            parts.push(format!("{}-{}", seeds[i], seeds[j]));
        } else {
            parts.extend(seeds[i..=j].iter().map(u64::to_string));
        }
        i = j + 1;
    }
    match parts.split_last() {
        None => "none".to_owned(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::matrix::cell::{aggregate, CellHead};

    /// A run of the cell `java-redisson-fenced × clock-jump`.
    pub(crate) fn run(seed: u64, verdict: &str) -> RunSummary {
        RunSummary::checked("java-redisson-fenced", "clock-jump", seed, verdict)
    }

    /// The cell with `runs` and `note`, in a record of it alone.
    pub(crate) fn noted(runs: Vec<RunSummary>, note: CellNote) -> MatrixRecord {
        let head = CellHead {
            row: "java-redisson-fenced".into(),
            column: "clock-jump".into(),
            expected: "invalid".into(),
            expected_why: "why".into(),
            note: Some(note),
            ..CellHead::default()
        };
        MatrixRecord::of_cells(vec![aggregate(head, runs)])
    }

    fn ten_unsafe() -> Vec<RunSummary> {
        (1..=10).map(|s| run(s, "invalid")).collect()
    }

    fn claiming(text: &str, verdict: RunVerdict, seeds: &[u64]) -> CellNote {
        let mut note = CellNote::plain(text);
        note.seeds.insert(verdict, seeds.to_vec());
        note
    }

    #[test]
    fn figures_are_generated_from_the_cells_runs() {
        let mut runs = ten_unsafe();
        runs[1] = run(2, "valid");
        runs[2] = run(3, "valid");
        runs[6] = run(7, "stuck");
        let note = CellNote::plain(
            "{cell}: {invalid} of {counted} ({seeds:invalid}); valid in {seeds:valid}; stuck {seeds:stuck}; none {seeds:failed}",
        );
        let record = noted(runs, note);
        let text = rendered_note(&record.cells[0], &record).unwrap().unwrap();
        assert_eq!(
            text,
            "UNSAFE 7/10: 7 of 10 (1, 4-6 and 8-10); valid in 2 and 3; stuck 7; none none"
        );
        assert!(stale_notes(&record).is_empty());
    }

    #[test]
    fn a_note_naming_a_seed_outside_the_cell_is_refused() {
        let note = claiming("{seed 12} broke it", RunVerdict::Invalid, &[12]);
        let record = noted(ten_unsafe(), note);
        let stale = stale_notes(&record);
        assert_eq!(stale.len(), 1);
        assert_eq!(
            stale[0].problems,
            ["names seed 12 (invalid), which is not among the cell's runs (seeds 1-10)"]
        );
        let e = StaleNotes(stale).to_string();
        assert!(
            e.contains("\n  java-redisson-fenced × clock-jump: names seed 12"),
            "{e}"
        );
        // A cell that has not run (a run of other rows or faults) has nothing to hold its note
        // to: it is neither checked nor shown, rather than taken for stale.
        let record = noted(vec![], claiming("{seed 1}", RunVerdict::Invalid, &[1]));
        assert!(stale_notes(&record).is_empty());
        assert_eq!(rendered_note(&record.cells[0], &record), None);
    }

    #[test]
    fn a_stale_verdict_claim_is_refused() {
        // java-redisson-fenced × clock-jump: the note said seeds 2 and 3 were valid; the cell
        // came out UNSAFE 10/10.
        let note = claiming(
            "{seed 2} and {seed 3} stayed valid",
            RunVerdict::Valid,
            &[2, 3],
        );
        let record = noted(ten_unsafe(), note);
        assert_eq!(
            stale_notes(&record)[0].problems,
            [
                "says seed 2 was valid, but the cell's run of seed 2 is invalid",
                "says seed 3 was valid, but the cell's run of seed 3 is invalid"
            ]
        );
        // A valid run whose fault fell short tested nothing: it is not a valid one.
        let mut short = run(2, "valid");
        short.not_exposed = Some("the jump came after the run".into());
        let record = noted(vec![short], claiming("{seed 2}", RunVerdict::Valid, &[2]));
        assert_eq!(
            stale_notes(&record)[0].problems,
            ["says seed 2 was valid, but the cell's run of seed 2 is not-exposed"]
        );
    }

    #[test]
    fn the_markdown_refuses_a_stale_note_and_the_live_page_marks_it() {
        let stale = claiming("{seed 2} stayed valid", RunVerdict::Valid, &[2]);
        let record = noted(ten_unsafe(), stale);
        let e = crate::matrix::matrix_markdown(&record, "again").unwrap_err();
        assert_eq!(e.0.len(), 1);
        assert!(
            e.to_string()
                .starts_with("render the matrix: 1 note(s) disagree"),
            "{e}"
        );
        let page = crate::matrix::render_matrix_page(&record, "r").unwrap();
        assert!(page.contains("Stale note, not shown:"), "{page}");
        assert!(
            !page.contains("stayed valid"),
            "the stale text is not shown"
        );
        // The same cell with a true note: printed, figures filled.
        let fresh = claiming("{cell}; {seed 2} broke it", RunVerdict::Invalid, &[2]);
        let record = noted(ten_unsafe(), fresh);
        let md = crate::matrix::matrix_markdown(&record, "again").unwrap();
        assert!(md.contains("*Note:* UNSAFE 10/10; seed 2 broke it"), "{md}");
        let page = crate::matrix::render_matrix_page(&record, "r")
            .unwrap()
            .replace("&#x2f;", "/");
        assert!(page.contains("UNSAFE 10/10; seed 2 broke it"), "{page}");
    }

    #[test]
    fn a_stored_note_typing_a_figure_or_naming_a_missing_row_is_stale() {
        // An old record's plain note, never checked by the file's rules.
        let record = noted(ten_unsafe(), CellNote::plain("2 runs of 3 valid"));
        let problems = &stale_notes(&record)[0].problems;
        assert!(
            problems[0].contains("types a run figure by hand"),
            "{problems:?}"
        );
        let record = noted(ten_unsafe(), CellNote::plain("as {cell:redis}"));
        assert_eq!(
            stale_notes(&record)[0].problems,
            ["{cell:redis} names row \"redis\", which has no cell in column \"clock-jump\""]
        );
    }
}
