//! Safety matrices: locks (rows) × faults (columns), each cell an ordinary scenario whose
//! fault sizes are resolved against the row's own lease, run over several seeds.

mod cell_file;
mod column;
mod error;
mod file;
mod note;
mod plan;
mod row;
mod shard;
mod size;

pub use column::{Column, ColumnSize};
pub use error::MatrixError;
pub use file::{
    folder_of, load_matrix, load_matrix_in, parse_matrix, parse_matrix_in, Matrix, MAX_SEEDS,
};
pub use note::with_file_notes;
pub use plan::{plan_cell, plan_matrix, preflight_matrix, promise, CellPlan, Resolved};
pub use row::{Expectation, Expected, Row};
pub use shard::{assign, RunCost, Shard, MAX_SHARDS};
pub use size::{Basis, Promise, Size};
