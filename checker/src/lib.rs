//! Pure, synchronous checkers for lockpick histories: the history format, lock-safety checks,
//! linearizability, and verdicts. No async runtime and no I/O beyond reading a history file
//! and the server record beside it.

pub mod exposure;
pub mod fault_verbs;
pub mod faults;
pub mod history;
pub mod import;
pub mod lin_search;
pub mod linearizability;
pub mod lock;
pub mod models;
pub mod results;
pub mod run_checks;
pub mod server_record;
pub mod verdict;
