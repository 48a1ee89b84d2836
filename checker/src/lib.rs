//! Pure, synchronous checkers for lockpick histories: the history format, lock-safety checks and
//! verdicts. No async runtime and no I/O beyond reading a history file.

pub mod history;
pub mod import;
pub mod lin;
pub mod models;
pub mod verdict;
