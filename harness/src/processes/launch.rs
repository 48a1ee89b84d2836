//! One attempt to start a node process and wait until it answers its readiness probe.

use std::fs::OpenOptions;
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::child::Child;
use super::error::ProcessError;
use super::folder::NodeFolder;
use super::kind::{NodeKind, PROBE_INTERVAL};
use super::registry;
use super::spawner::{self, SpawnFailure};

/// Why one launch attempt failed.
pub(crate) enum LaunchFailure {
    /// The port was taken; another attempt may succeed.
    AddressInUse(ProcessError),
    Fatal(ProcessError),
}

/// Kills a child whose start is abandoned, including when the starting future is dropped.
struct KillOnDrop(Option<Child>);

impl KillOnDrop {
    fn child(&self) -> &Child {
        self.0.as_ref().expect("child taken only by disarm")
    }

    fn disarm(mut self) -> Child {
        self.0.take().expect("disarm called once")
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(child) = &self.0 {
            // The reaper thread reaps it; no need to wait here.
            let _ = registry::signal(child.pid(), libc::SIGKILL);
        }
    }
}

/// One attempt to start `kind` on `addr` in `folder` and wait until it is ready.
pub(crate) async fn launch(
    name: &str,
    kind: &NodeKind,
    folder: &NodeFolder,
    addr: SocketAddr,
) -> Result<(Child, Duration), LaunchFailure> {
    let folder_err = |path: &Path, source: io::Error| {
        LaunchFailure::Fatal(ProcessError::Folder {
            node: name.to_string(),
            path: path.to_path_buf(),
            source,
        })
    };
    // Blocking (PostgreSQL's runs initdb), and other runs' clients share this runtime.
    crate::blocking::off_runtime(|| kind.write_config(folder, addr.port()))
        .map_err(|err| folder_err(&folder.config, err))?;
    let console = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&folder.console)
        .map_err(|err| folder_err(&folder.console, err))?;
    let console_err = console
        .try_clone()
        .map_err(|err| folder_err(&folder.console, err))?;
    let mut command = kind.command(folder);
    command
        .stdin(Stdio::null())
        .stdout(console)
        .stderr(console_err);
    let mark = folder.mark_logs();
    let spawned_at = Instant::now();
    let child = spawner::spawn(command).await.map_err(|failure| {
        LaunchFailure::Fatal(match failure {
            SpawnFailure::ShuttingDown => ProcessError::ShuttingDown {
                node: name.to_string(),
            },
            SpawnFailure::Io(source) if source.kind() == io::ErrorKind::NotFound => {
                ProcessError::MissingBinary {
                    binary: kind.binary().to_path_buf(),
                    package: kind.package(),
                }
            }
            SpawnFailure::Io(source) => ProcessError::Spawn {
                node: name.to_string(),
                binary: kind.binary().to_path_buf(),
                source,
            },
        })
    })?;
    let guard = KillOnDrop(Some(child));
    let timeout = kind.ready_timeout();
    loop {
        if let Some(status) = guard.child().exit() {
            let err = ProcessError::ExitedEarly {
                node: name.to_string(),
                addr: addr.to_string(),
                status,
                log_tail: folder.log_tail(),
            };
            return Err(if kind.address_in_use(&folder.logs_since(mark)) {
                LaunchFailure::AddressInUse(err)
            } else {
                LaunchFailure::Fatal(err)
            });
        }
        if kind.probe(addr).await {
            let startup = spawned_at.elapsed();
            kind.on_ready(folder);
            return Ok((guard.disarm(), startup));
        }
        if spawned_at.elapsed() >= timeout {
            let child = guard.disarm();
            let _ = registry::signal(child.pid(), libc::SIGKILL);
            child.wait().await;
            let err = ProcessError::NotReady {
                node: name.to_string(),
                addr: addr.to_string(),
                timeout,
                log_tail: folder.log_tail(),
            };
            // A server that lost a port (ZooKeeper's election port, say) may keep running
            // without ever becoming ready: the log tells, and a new port may do.
            return Err(if kind.address_in_use(&folder.logs_since(mark)) {
                LaunchFailure::AddressInUse(err)
            } else {
                LaunchFailure::Fatal(err)
            });
        }
        tokio::time::sleep(PROBE_INTERVAL).await;
    }
}
