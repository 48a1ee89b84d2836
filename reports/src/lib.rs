//! Human-readable reports of lockpick runs.

mod summary;

pub use summary::text_summary;
