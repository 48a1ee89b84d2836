//! Human-readable reports of lockpick runs: the terminal summary, the per-run `report.html`,
//! the cross-backend `compare.html`, and the index of stored runs.

mod charts;
mod compare;
mod error;
mod quantiles;
mod run_report;
mod store_index;
mod summary;
mod templates;
mod view;

pub use compare::{
    render_comparison, write_comparison, ComparedBackend, ComparedRun, Comparison, FaultColumn,
};
pub use error::ReportError;
pub use quantiles::{latency_quantiles, quantile, Quantiles};
pub use run_report::{
    finding_sentences, read_results, render_run_report, report_run_dir, write_run_report,
};
pub use store_index::{list_runs, render_index, StoredRun, COMPARE_DIR};
pub use summary::{lin_text, text_summary};
pub use view::RunView;
