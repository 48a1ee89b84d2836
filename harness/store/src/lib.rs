//! The run store's own records, shared by the harness (which writes them) and the readers
//! (`check`, `report`, `serve`, the index, `gc`): where each run's folder goes and how it is
//! named, files written whole or not at all, and each run's state record `run.json`, which
//! says how far the run got and how it ended. Small on purpose: the runner needs it without
//! the report renderer's chart and template crates.

mod atomic;
pub mod command_words;
mod error;
pub mod explore;
pub mod gc;
mod layout;
mod run_state;
pub mod soak;

pub use atomic::{link_atomic, write_atomic};
pub use error::StoreError;
pub use layout::{run_id, seed_of, utc_stamp, LATEST};
pub use run_state::{
    Ended, Phase, RunState, RunStatus, RuntimeStall, ServerInstance, RUN_STATE_FILE,
    RUN_STATE_VERSION,
};
