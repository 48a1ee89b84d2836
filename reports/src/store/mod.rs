//! The run store's own records, shared by the harness (which writes them) and the readers
//! (`check`, `report`, `serve`, the index): files written whole or not at all, each run's state
//! record `run.json` that says how far the run got and how it ended, and `lockpick gc`.

pub mod atomic;
pub mod gc;
pub mod run_state;

pub use atomic::{link_atomic, write_atomic};
pub use run_state::{Ended, Phase, RunState, RunStatus, RUN_STATE_FILE, RUN_STATE_VERSION};
