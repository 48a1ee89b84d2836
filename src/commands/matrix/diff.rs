//! `lockpick matrix diff OLD NEW`: two publications of a matrix side by side, as
//! [`lockpick_reports::matrix::diff_matrices`] compares them.

use crate::cli::MatrixDiffArgs;
use crate::outcome::{Exit, Failure, Outcome};
use lockpick_harness::matrix_run::newest_matrix;
use lockpick_reports::matrix::{diff_matrices, diff_text, MatrixRecord, MATRIX_DIR};
use std::path::{Path, PathBuf};

pub(super) fn diff(args: &MatrixDiffArgs) -> Outcome {
    let (old_file, old) = read(&args.old)?;
    let (new_file, new) = read(&args.new)?;
    let d = diff_matrices(&old, &new);
    out!(
        "{}",
        diff_text(
            &d,
            &old_file.display().to_string(),
            &new_file.display().to_string()
        )
    );
    Ok(Exit::Done)
}

/// The `matrix.json` that `given` names (the file, its matrix folder, or a store's newest
/// matrix), read.
fn read(given: &Path) -> Result<(PathBuf, MatrixRecord), Failure> {
    let file = if given.is_file() {
        given.to_owned()
    } else if given.join("matrix.json").is_file() {
        given.join("matrix.json")
    } else {
        newest_matrix(&given.join(MATRIX_DIR))
            .map(|dir| dir.join("matrix.json"))
            .filter(|f| f.is_file())
            .ok_or_else(|| {
                Failure::Usage(format!(
                    "matrix diff {}: no matrix.json there; allowed: a matrix.json, the matrix folder holding one, or a store with matrix/<time>/matrix.json",
                    given.display()
                ))
            })?
    };
    let bytes = std::fs::read(&file).map_err(|source| Failure::ReadInput {
        path: file.clone(),
        source,
    })?;
    let record = serde_json::from_slice::<MatrixRecord>(&bytes).map_err(|e| {
        Failure::Usage(format!(
            "matrix diff: read {}: {e} (is it a matrix.json lockpick wrote?)",
            file.display()
        ))
    })?;
    Ok((file, record))
}
