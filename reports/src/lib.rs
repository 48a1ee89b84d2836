//! Human-readable reports of lockpick runs: the terminal summary, the per-run `report.html`,
//! the cross-backend `compare.html`, the index of stored runs, and the suite's JUnit file and
//! trend page.

mod atomic_write;
pub mod bench;
mod card;
mod charts;
mod compare;
mod compare_timelines;
mod episodes;
mod error;
pub mod explore;
mod exposure;
mod history_page;
mod html;
mod junit;
pub mod matrix;
mod quantiles;
mod run_report;
mod soak_section;
pub mod stats;
mod store_index;
mod suite_markdown;
mod suite_page;
mod suite_record;
mod summary;
mod templates;
mod view;

pub use atomic_write::write_atomic;
pub use compare::{
    acquire_latencies, acquire_outcomes, render_comparison, write_comparison, AcquireOutcomes,
    ComparedBackend, ComparedRun, Comparison, FaultColumn,
};
pub use error::ReportError;
pub use explore::{list_explorations, write_explore_page, EXPLORE_DIR};
pub use exposure::exposure_text;
pub use junit::junit_xml;
pub use quantiles::{latency_quantiles, quantile, Quantiles};
pub use run_report::{
    finding_sentences, read_results, render_run_report, report_run_dir, write_run_report,
    write_run_report_streaming,
};
pub use store_index::{list_runs, render_index, StoredRun, COMPARE_DIR};
pub use suite_markdown::{render_suite_markdown, suite_markdown, RunFacts};
pub use suite_page::{render_suite_page, write_suite_page, MAX_NIGHTS};
pub use suite_record::{
    read_suite_history, read_suite_record, write_suite_record, CaseStatus, SuiteCase, SuiteRecord,
    SUITE_DIR, SUITE_FILE, SUITE_VERSION,
};
pub use summary::{lin_note, lin_text, text_summary};
pub use view::{Outcome, RunView, ViewBuilder};
