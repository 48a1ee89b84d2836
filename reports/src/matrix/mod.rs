//! The safety matrix's records, cell aggregation, page (`matrix.html`) and markdown table.

mod cell;
mod diff;
mod junit;
mod markdown;
mod note;
mod note_figures;
mod note_render;
mod note_text;
mod page;
mod recheck_text;
mod record;
mod rerender;
mod run_stats;
mod twins;

pub use cell::{aggregate, safety_counts, with_expectation, with_exploration, CellHead};
pub use diff::{
    diff_matrices, diff_text, since_section, CellDiff, MatrixDiff, NotCompared, Unmatched,
};
pub use junit::matrix_junit;
pub use lockpick_checker::exposure::{exposures, Plan as ExposurePlan};
pub use markdown::{matrix_markdown, record_beside};
pub use note::{CellNote, RunVerdict};
pub use note_render::{rendered_note, stale_notes, StaleNote, StaleNotes};
pub use page::{cell_label, cell_sentence, cell_text, render_matrix_page, write_matrix};
pub use recheck_text::recheck_sentence;
pub use record::recorded_folder;
pub use record::Recheck;
pub use record::{
    percent_up, CellExplore, CellStatus, CellSummary, ColumnInfo, ExpectationSource, MatrixRecord,
    Rate, RowInfo, RunSummary, Until, MATRIX_DIR, MATRIX_EXPLORE_DIR, MATRIX_VERSION,
};
pub use rerender::{page_again, rerendered_page, RerenderError};
pub use run_stats::{failed_run, summarize_run, RunPlace};
pub use twins::disciplines_section;
