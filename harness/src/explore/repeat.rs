//! The command line that repeats one of an exploration's runs, as its records and the shrunk
//! scenario's comment print it.

use lockpick_store::command_words::{path_word, store_flag};
use std::net::SocketAddr;
use std::path::Path;

/// The command that repeats one of the exploration's runs of `file` at `seed`: into the same
/// store and through the same Toxiproxy, so that it is the same run when pasted.
pub(super) fn repeat_command(
    program: &str,
    file: &Path,
    seed: u64,
    store: &Path,
    toxiproxy: Option<SocketAddr>,
) -> String {
    let mut cmd = format!("{program} scenario {} --seed {seed}", path_word(file));
    if let Some(t) = toxiproxy {
        cmd.push_str(&format!(" --toxiproxy {t}"));
    }
    cmd.push_str(&store_flag(store));
    cmd
}
