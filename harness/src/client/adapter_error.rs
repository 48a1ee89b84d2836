//! How an adapter process can break a run: it cannot be started, or it broke the protocol.
//! Messages read after "failed to …".

use std::path::PathBuf;

/// A client adapter the harness cannot work with. Never a verdict: the run stops with it.
#[derive(Debug, thiserror::Error)]
pub enum AdapterError {
    /// The command could not be started (missing runtime or uninstalled adapter).
    #[error("start client {client}'s adapter `{command}`: {source}{hint}")]
    Spawn {
        client: usize,
        command: String,
        source: std::io::Error,
        /// How to install what is missing, when that is known.
        hint: String,
    },
    /// The adapter answered `init` with `fail`: it cannot start as the scenario asks (an
    /// `[client] init` value it refuses, or a setting its library does not take: a Go helper
    /// answers any start error so), a usage error, not a break. Its reason says which.
    #[error(
        "run client {client}'s adapter `{command}`: it refused to start as the scenario asks (its \
         [client] init options, or what its reason names): {reason}"
    )]
    RefusedInit {
        client: usize,
        command: String,
        reason: String,
    },
    /// The adapter answered `init` with `info`: its library could not start (it could not
    /// reach the servers, say), and whether it did anything is not known. Not a protocol
    /// break, and not a verdict: the run cannot go on without that client.
    #[error(
        "run client {client} (process {process}, adapter `{command}`): its library could not \
         start: {reason}\n  its stderr ({stderr_path}) ends with:\n{stderr_tail}",
        stderr_path = stderr.display()
    )]
    StartFailed {
        client: usize,
        process: u64,
        command: String,
        reason: String,
        stderr: PathBuf,
        stderr_tail: String,
    },
    /// The adapter broke the client protocol (docs/client-protocol.md).
    #[error(
        "run client {client} (process {process}, adapter `{command}`): it broke the client \
         protocol: {what}{sent}\n  its stderr ({stderr_path}) ends with:\n{stderr_tail}",
        stderr_path = stderr.display(),
        sent = match line { Some(l) => format!("\n  the line it sent: {l}"), None => String::new() }
    )]
    Broke {
        client: usize,
        process: u64,
        command: String,
        what: String,
        /// The offending line, if it sent one.
        line: Option<String>,
        stderr: PathBuf,
        stderr_tail: String,
    },
}

/// The last `lines` lines of the file at `path`, indented, or a note why there are none.
pub fn tail(path: &std::path::Path, lines: usize) -> String {
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => "    (nothing)".to_owned(),
        Ok(text) => {
            let all: Vec<&str> = text.lines().collect();
            let from = all.len().saturating_sub(lines);
            all[from..]
                .iter()
                .map(|l| format!("    {l}"))
                .collect::<Vec<_>>()
                .join("\n")
        }
        Err(e) => format!("    (unreadable: {e})"),
    }
}
