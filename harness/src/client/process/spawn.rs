//! Starting one adapter process: through the supervisor's spawner (so it dies with lockpick,
//! SIGKILL of lockpick included, and the emergency stop kills it), its stdin and stdout piped,
//! its stderr to `clients/p<process>.stderr` in the run folder.

use super::Config;
use crate::client::adapter_error::AdapterError;
use crate::client::lock::Connecting;
use crate::db::{spawn_piped, SpawnFailure, Spawned};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// How to install what an adapter needs, said with every failure to start one.
pub(super) const INSTALL_HINT: &str =
    "; install the adapters' runtimes and packages with `bash scripts/setup`";

/// Where process `process`'s stderr goes in the run folder `run_dir`.
pub(super) fn stderr_path(run_dir: &Path, process: u64) -> PathBuf {
    run_dir.join("clients").join(format!("p{process}.stderr"))
}

/// Where the first hello of a run is kept in the run folder `run_dir`.
pub(super) fn hello_path(run_dir: &Path) -> PathBuf {
    run_dir.join("clients").join("hello.json")
}

/// Spawns the adapter for `client`/`process`.
pub(super) async fn spawn_adapter(
    config: &Config,
    who: &Connecting,
) -> Result<Spawned, AdapterError> {
    let client = who.client;
    let command_line = config.spec.command_line();
    let spawn_error = |source: io::Error, hint: &str| AdapterError::Spawn {
        client,
        command: command_line.clone(),
        source,
        hint: hint.to_owned(),
    };
    // A path in the command that is not there (an adapter not installed, a venv not made)
    // is named before anything starts, rather than left to the runtime's own message.
    for part in &config.spec.command {
        if Path::new(part).is_absolute() && !Path::new(part).exists() {
            let e = io::Error::new(io::ErrorKind::NotFound, format!("{part} does not exist"));
            return Err(spawn_error(e, INSTALL_HINT));
        }
    }
    let Some((program, args)) = config.spec.command.split_first() else {
        let e = io::Error::new(io::ErrorKind::InvalidInput, "the command is empty");
        return Err(spawn_error(e, ""));
    };
    let stderr_path = stderr_path(&who.run_dir, who.process);
    if let Some(dir) = stderr_path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| spawn_error(e, ""))?;
    }
    let stderr = File::create(&stderr_path).map_err(|e| spawn_error(e, ""))?;
    let mut command = Command::new(program);
    command
        .args(args)
        .envs(config.spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(stderr));
    match spawn_piped(command).await {
        Ok(spawned) => Ok(spawned),
        Err(SpawnFailure::ShuttingDown) => Err(spawn_error(
            io::Error::other("lockpick is shutting down"),
            "",
        )),
        Err(SpawnFailure::Io(e)) if e.kind() == io::ErrorKind::NotFound => {
            Err(spawn_error(e, INSTALL_HINT))
        }
        Err(SpawnFailure::Io(e)) => Err(spawn_error(e, "")),
    }
}
