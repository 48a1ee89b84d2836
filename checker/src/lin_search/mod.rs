//! Linearizability checking: the Wing–Gong–Lowe search with memoisation, run per independent
//! part of a history (P-compositionality), under a time and memory budget.

mod budget;
mod cache;
mod growth;
pub(crate) mod hash;
mod linset;
mod op;
mod report;
mod run;
mod search;
mod shrink;
mod spec;

pub use budget::Budget;
pub use op::{Datum, History, Op, OpF};
pub use report::{LinReport, Violation};
pub use run::check_parts;
pub use spec::{Part, Spec};
