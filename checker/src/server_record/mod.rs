//! The server's own record of the locks (`server.jsonl`, beside `history.jsonl`): what a
//! watcher on each node saw happen to the lock's records (set, renewed, expired, deleted, the
//! node's reset), one versioned JSON event per line, and its line-by-line reader. The lock
//! checker sets it beside the clients' beliefs ([`crate::lock::ServerView`]).

mod diagnose;
mod error;
mod event;
mod read;

pub use error::{RecordProblem, ServerReadError};
pub use event::{RecordChange, ServerEvent, RESET_KEY, SERVER_RECORD_FILE, SERVER_RECORD_VERSION};
pub use read::{parse_server_record, read_server_record, read_server_record_in, ServerRecord};
