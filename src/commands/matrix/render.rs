//! `lockpick matrix render PAGE FILE`: a published page made again from the record beside it,
//! judged by the matrix file as it is now ([`lockpick_harness::matrix_run::judge_by_file`]).

use crate::cli::MatrixRenderArgs;
use crate::outcome::{Exit, Failure, Outcome};
use lockpick_harness::matrix_run::judge_by_file;
use lockpick_reports::matrix::{record_beside, rerendered_page, MatrixRecord, RerenderError};

pub(super) fn render(args: &MatrixRenderArgs) -> Outcome {
    let read = |path: &std::path::Path| {
        std::fs::read(path).map_err(|source| Failure::ReadInput {
            path: path.to_owned(),
            source,
        })
    };
    let json = record_beside(&args.page);
    let old_page = String::from_utf8_lossy(&read(&args.page)?).into_owned();
    let mut record: MatrixRecord = serde_json::from_slice(&read(&json)?).map_err(|e| {
        Failure::Usage(format!(
            "matrix render: read {}: {e} (is it the record `matrix --markdown {}` wrote?)",
            json.display(),
            args.page.display()
        ))
    })?;
    let rejudged = judge_by_file(&mut record, &args.file)?;
    for (row, column) in &rejudged.unplaced_notes {
        eprintln!(
            "lockpick: {}'s note on {row} × {column} has no cell in {}: not shown",
            args.file.display(),
            json.display()
        );
    }
    for (row, column) in &rejudged.unjudged {
        eprintln!(
            "lockpick: {} has no expectation for {row} × {column}: the cell keeps the one it was run with",
            args.file.display()
        );
    }
    let text = rerendered_page(&record, &old_page).map_err(|e| match e {
        RerenderError::Stale(stale) => Failure::StaleNotes(stale),
        RerenderError::NoCommand => {
            Failure::Usage(format!("matrix render {}: {e}", args.page.display()))
        }
    })?;
    let bytes = serde_json::to_vec_pretty(&record).expect("records serialize");
    lockpick_reports::write_atomic(&json, &bytes).map_err(Failure::WriteOutput)?;
    lockpick_reports::write_atomic(&args.page, text.as_bytes()).map_err(Failure::WriteOutput)?;
    let mismatches = record.mismatches();
    outln!(
        "markdown: {} ({} cell(s) disagree with their expectation)",
        args.page.display(),
        mismatches
    );
    Ok(Exit::Done)
}
