//! Why a matrix could not be run: bad input (a flag, a folder, a matrix file), a run or a
//! search that could not be carried out, or a page or folder that could not be written.

use crate::matrix::MatrixError;
use crate::run::RunError;
use crate::scenario::ScenarioError;
use lockpick_reports::ReportError;
use std::path::PathBuf;

/// An error of [`super::run_matrix`]; the command decides its exit code.
#[derive(Debug, thiserror::Error)]
pub enum MatrixRunError {
    /// What was asked cannot be run (a name not in the matrix, a folder that is not one
    /// `lockpick matrix` made, options that do not go together).
    #[error("{0}")]
    Input(String),
    /// The matrix file cannot be read or planned.
    #[error(transparent)]
    Matrix(#[from] MatrixError),
    /// A cell's scenario cannot be used (by a search).
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The matrix file named cannot be read.
    #[error("read {}: {source}", path.display())]
    ReadInput {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A folder of the matrix cannot be made.
    #[error("create {}: {source}", path.display())]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A record or page of the matrix cannot be written.
    #[error(transparent)]
    Write(ReportError),
    /// A search's runs could not be carried out, with the command that repeats it.
    #[error("{source}")]
    Run {
        source: Box<RunError>,
        reproduce: Option<String>,
    },
}
