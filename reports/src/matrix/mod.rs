//! The safety matrix's records, cell aggregation, page (`matrix.html`) and markdown table.

mod cell;
mod reach;
mod record;

pub use cell::{aggregate, CellHead};
pub use reach::{fault_reach, Needs};
pub use record::{
    CellStatus, CellSummary, ColumnInfo, MatrixRecord, RowInfo, RunSummary, MATRIX_DIR,
    MATRIX_VERSION,
};
