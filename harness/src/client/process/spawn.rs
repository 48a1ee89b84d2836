//! Starting one adapter process: through the supervisor's spawner, as PID 1 of a PID namespace
//! of its own ([`super::tree`]: it and everything it starts die with lockpick, SIGKILL of
//! lockpick included, and the emergency stop kills them), its stdin and stdout piped, its
//! stderr to `clients/p<process>.stderr` in the run folder.

use super::Config;
use crate::client::adapter_error::AdapterError;
use crate::client::lock::Connecting;
use crate::processes::{find_binary, spawn_piped, SpawnFailure, Spawned};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// How to install a shipped adapter's packages (a venv, `node_modules`, a release build).
const SETUP_HINT: &str =
    "; the shipped adapters' packages are installed by `bash scripts/setup` (from the repo)";

/// How to install the runtime `program` (a bare name that is not on PATH), if it is one.
fn runtime_hint(program: &str) -> String {
    match super::manifest::RUNTIMES
        .iter()
        .find(|(name, _)| *name == program)
    {
        Some((name, how)) => format!("; `{name}` is not installed: install {how}"),
        None => String::new(),
    }
}

/// The variable every JVM reads options from, before its command line's.
const JAVA_TOOL_OPTIONS: &str = "JAVA_TOOL_OPTIONS";

/// What an adapter gets in `JAVA_TOOL_OPTIONS`: lockpick's two options, then the scenario's
/// value or else lockpick's own environment's. Every adapter is PID 1 of a PID namespace of
/// its own, so two JVMs would share `/tmp/hsperfdata_<user>/1` (the directory is not per
/// namespace), and the loser prints a warning on stdout, which is the protocol's: a first
/// adapter run with a plain `java -cp ...` failed so in one client of four. lockpick made
/// that collision, so it turns the file off (`-XX:-UsePerfData`: nothing reads it here) and
/// sends the JVM's own warnings to stderr, where every adapter's diagnostics go. Other
/// runtimes ignore the variable; a JVM notes it on stderr ("Picked up ...").
fn java_tool_options(env: &[(String, String)]) -> String {
    let theirs = (env.iter().find(|(k, _)| k == JAVA_TOOL_OPTIONS))
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var(JAVA_TOOL_OPTIONS).ok());
    let ours = "-XX:-UsePerfData -Xlog:all=warning:stderr";
    match theirs {
        Some(v) if !v.trim().is_empty() => format!("{ours} {v}"),
        _ => ours.to_owned(),
    }
}

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
            let hint = if super::manifest::is_installed_path(part) {
                SETUP_HINT
            } else {
                ""
            };
            return Err(spawn_error(e, hint));
        }
    }
    let Some((program, args)) = config.spec.command.split_first() else {
        let e = io::Error::new(io::ErrorKind::InvalidInput, "the command is empty");
        return Err(spawn_error(e, ""));
    };
    // Resolved here, not by the namespace wrapper: a missing runtime is then named as such,
    // with its package, instead of as the wrapper's exit status.
    let Some(program) = find_binary(Path::new(program)) else {
        let e = io::Error::new(
            io::ErrorKind::NotFound,
            format!("program `{program}` is not on PATH or not executable"),
        );
        return Err(spawn_error(e, &runtime_hint(program)));
    };
    if let Err(why) = super::tree::check_installed() {
        return Err(spawn_error(
            io::Error::new(io::ErrorKind::NotFound, why),
            "",
        ));
    }
    let stderr_path = stderr_path(&who.run_dir, who.process);
    if let Some(dir) = stderr_path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| spawn_error(e, ""))?;
    }
    let stderr = File::create(&stderr_path).map_err(|e| spawn_error(e, ""))?;
    let mut command = super::tree::command(&program, args);
    command
        .env(JAVA_TOOL_OPTIONS, java_tool_options(&config.spec.env))
        .envs(
            (config.spec.env.iter())
                .filter(|(k, _)| k != JAVA_TOOL_OPTIONS)
                .map(|(k, v)| (k, v)),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(stderr));
    match spawn_piped(command).await {
        Ok(spawned) => Ok(spawned),
        Err(SpawnFailure::ShuttingDown) => Err(spawn_error(
            io::Error::other("lockpick is shutting down"),
            "",
        )),
        Err(SpawnFailure::Io(e)) => Err(spawn_error(e, "")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jvm_adapter_shares_no_perf_file_and_warns_on_stderr_before_the_scenarios_options() {
        let ours = "-XX:-UsePerfData -Xlog:all=warning:stderr";
        let env = |v: &str| vec![(JAVA_TOOL_OPTIONS.to_owned(), v.to_owned())];
        assert_eq!(
            java_tool_options(&env("-Xmx32m")),
            format!("{ours} -Xmx32m")
        );
        assert_eq!(java_tool_options(&env(" ")), ours);
    }

    #[test]
    fn a_missing_runtime_names_its_package_and_an_unknown_program_names_none() {
        let node = runtime_hint("node");
        assert!(
            node.contains("`node` is not installed") && node.contains("nodejs"),
            "{node}"
        );
        assert!(runtime_hint("python3").contains("python3-venv"));
        assert_eq!(runtime_hint("my-adapter"), "");
    }
}
