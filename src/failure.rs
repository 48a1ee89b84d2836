//! [`Failure`]: why a command could not do its work. Each variant keeps the typed error it
//! came from, and [`Failure::code`] alone decides the exit code, in one match over every
//! variant (and every variant of a source that holds both kinds), so bad input exits 3 and a
//! broken harness 4 wherever either is found. The message reads after "failed to …".

use crate::exit_code::{HARNESS, USAGE};
use lockpick_checker::history::ReadError;
use lockpick_checker::linearizability::CheckError;
use lockpick_checker::server_record::ServerReadError;
use lockpick_harness::client::process::AdapterError;
use lockpick_harness::matrix::MatrixError;
use lockpick_harness::matrix_run::MatrixRunError;
use lockpick_harness::proxy::ProxyError;
use lockpick_harness::run::RunError;
use lockpick_harness::scenario::ScenarioError;
use lockpick_reports::ReportError;
use lockpick_store::StoreError;
use std::fmt;
use std::path::PathBuf;

/// Why a command could not do its work. The largest sources are boxed: every `Result` of the
/// binary carries one.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// Bad input that lockpick's own checks find, with no typed error under it: an option out
    /// of range or that the scenario cannot take, a name that is not in the matrix, a store
    /// that is not a folder, scenario files that do not load.
    #[error("{0}")]
    Usage(String),
    /// A harness failure that lockpick tells itself: runs that failed (each reported as it
    /// happened), files `gc` could not remove, an address `serve` could not listen on.
    #[error("{0}")]
    Harness(String),
    /// A scenario (a name, a file, or a matrix cell's) that cannot be found, read or used.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// A matrix file that cannot be read or planned.
    #[error(transparent)]
    Matrix(#[from] MatrixError),
    /// `matrix --markdown`: notes of the matrix file that disagree with their cells' runs, so
    /// the publication was not written (the record and page were).
    #[error(transparent)]
    StaleNotes(#[from] lockpick_reports::matrix::StaleNotes),
    /// A history (`check`, `export`) that cannot be read.
    #[error(transparent)]
    History(#[from] ReadError),
    /// A run folder's server record (`server.jsonl`, `check`) that cannot be read.
    #[error(transparent)]
    ServerRecord(#[from] ServerReadError),
    /// `check --model`: a history that does not import, or does not fit the model.
    #[error("check {}: {source}", path.display())]
    CheckModel {
        path: PathBuf,
        source: Box<CheckError>,
    },
    /// `check` of a run folder whose `scenario.toml`, which says what to check, is unreadable.
    #[error("{0}\n  the run's scenario.toml tells which property and deadlock threshold to check; fix it, or give both --property and --deadlock-ms")]
    RunScenario(StoredScenarioError),
    /// A file named on the command line that cannot be read (the matrix file).
    #[error("read {}: {source}", path.display())]
    ReadInput {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A run folder given to `check` or `report`: its records cannot be read (bad input), or
    /// its `report.html` cannot be written (the harness).
    #[error(transparent)]
    RunFolder(ReportError),
    /// A run folder's `run.json` (`check`, `report`) that cannot be read.
    #[error(transparent)]
    RunRecord(StoreError),
    /// A run that could not be carried out, with the command that repeats it when the
    /// command prints one.
    #[error("{}{}", Chain(&**source), ReproduceLine(reproduce.as_deref()))]
    Run {
        source: Box<RunError>,
        reproduce: Option<String>,
    },
    /// SIGINT/SIGTERM handlers could not be installed.
    #[error("install signal handlers: {0}")]
    Signals(std::io::Error),
    /// `toxiproxy`: the embedded API could not serve.
    #[error(transparent)]
    Toxiproxy(#[from] ProxyError),
    /// A folder lockpick makes for what it writes.
    #[error("create {}: {source}", path.display())]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A page or record lockpick writes: compare.html, matrix.html and its records, suite.json,
    /// the trend page, a JUnit or markdown file.
    #[error(transparent)]
    WriteOutput(ReportError),
}

impl From<RunError> for Failure {
    fn from(source: RunError) -> Self {
        Failure::Run {
            source: Box::new(source),
            reproduce: None,
        }
    }
}

impl From<MatrixRunError> for Failure {
    /// Each of a matrix's errors as the command's own: bad input, or the harness.
    fn from(e: MatrixRunError) -> Self {
        match e {
            MatrixRunError::Input(why) => Failure::Usage(why),
            MatrixRunError::Matrix(e) => Failure::Matrix(e),
            MatrixRunError::Scenario(e) => Failure::Scenario(e),
            MatrixRunError::ReadInput { path, source } => Failure::ReadInput { path, source },
            MatrixRunError::CreateDir { path, source } => Failure::CreateDir { path, source },
            MatrixRunError::Write(e) => Failure::WriteOutput(e),
            MatrixRunError::Run { source, reproduce } => Failure::Run { source, reproduce },
        }
    }
}

impl Failure {
    /// [`Failure::Usage`] from a message the binary composes. It takes text, not an error: a
    /// typed error gets a variant of its own, so its code is decided in [`Failure::code`].
    pub fn usage(message: impl Into<String>) -> Self {
        Failure::Usage(message.into())
    }

    /// [`Failure::Harness`] from a message the binary composes; text only, as for
    /// [`Failure::usage`].
    pub fn harness(message: impl Into<String>) -> Self {
        Failure::Harness(message.into())
    }

    /// [`USAGE`] (3) for bad input, [`HARNESS`] (4) for a harness that failed. Every variant,
    /// and every variant of a source that holds both kinds, is named: a new one does not
    /// compile until it is placed.
    pub fn code(&self) -> u8 {
        match self {
            Failure::Usage(_)
            | Failure::Scenario(_)
            | Failure::Matrix(_)
            | Failure::StaleNotes(_)
            | Failure::History(_)
            | Failure::ServerRecord(_)
            | Failure::CheckModel { .. }
            | Failure::RunScenario(_)
            | Failure::ReadInput { .. } => USAGE,
            Failure::Harness(_)
            | Failure::Signals(_)
            | Failure::CreateDir { .. }
            | Failure::WriteOutput(_) => HARNESS,
            Failure::RunFolder(e) => match e {
                ReportError::Read { .. } | ReportError::Parse { .. } => USAGE,
                ReportError::Write { .. }
                | ReportError::Chart(_)
                | ReportError::Template { .. } => HARNESS,
            },
            Failure::RunRecord(e) => match e {
                StoreError::Read { .. } | StoreError::Parse { .. } => USAGE,
                StoreError::Write { .. } => HARNESS,
            },
            Failure::Run { source, .. } => match &**source {
                // What the command line asked of the scenario, refused before anything starts.
                RunError::Options(_) | RunError::External(_) => USAGE,
                // A well-formed address where no server answers (yet): the environment, as
                // with a `--toxiproxy` or `--resource` that does not answer; the same command
                // succeeds once the server is up.
                RunError::Unreachable { .. } => HARNESS,
                RunError::Store { .. }
                | RunError::Process(_)
                | RunError::Proxy(_)
                | RunError::Nemesis(_)
                | RunError::Cluster(_)
                | RunError::Record(_)
                | RunError::Server(_)
                | RunError::Client { .. }
                | RunError::Resource(_)
                | RunError::Watch(_)
                | RunError::ReadServerRecord(_)
                | RunError::ReadHistory(_)
                // Not the input's fault: the server died (its log says why), or the harness
                // made it die.
                | RunError::ServerExited { .. } => HARNESS,
                RunError::Adapter(e) => match &**e {
                    // The scenario's `[client] init`, refused by an adapter that declares no
                    // options to check at load: bad input, as it would have been at load.
                    AdapterError::RefusedInit { .. } => USAGE,
                    AdapterError::Spawn { .. }
                    | AdapterError::StartFailed { .. }
                    | AdapterError::Broke { .. } => HARNESS,
                },
            },
            Failure::Toxiproxy(e) => match e {
                // `toxiproxy --listen` off the loopback interface.
                ProxyError::NotLoopback { .. } => USAGE,
                ProxyError::Bind { .. }
                | ProxyError::Client { .. }
                | ProxyError::Unexpected { .. }
                | ProxyError::Port { .. }
                | ProxyError::Worker { .. }
                | ProxyError::ClientThread(_)
                | ProxyError::Signal(_) => HARNESS,
            },
        }
    }
}

/// Why a run folder's `scenario.toml` cannot be used by `check`.
#[derive(Debug, thiserror::Error)]
pub enum StoredScenarioError {
    #[error("read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Parse(#[from] ScenarioError),
}

/// An error and each of its causes, `: `-separated. A run's error wraps others
/// (`#[error(transparent)]`) whose own text may leave their cause out.
struct Chain<'a>(&'a dyn std::error::Error);

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(c) = cause {
            write!(f, ": {c}")?;
            cause = c.source();
        }
        Ok(())
    }
}

/// The line that repeats a failed run, when there is one.
struct ReproduceLine<'a>(Option<&'a str>);

impl fmt::Display for ReproduceLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(command) => write!(f, "\n  reproduce: {command}"),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    fn io_error() -> io::Error {
        io::Error::from(io::ErrorKind::PermissionDenied)
    }

    #[test]
    fn what_the_command_line_asked_of_a_run_is_bad_input() {
        for e in [
            RunError::Options("read --clients: 9 client(s)".into()),
            RunError::External("cannot run on external servers".into()),
        ] {
            assert_eq!(Failure::from(e).code(), USAGE);
        }
        let unreachable = RunError::Unreachable {
            node: "n1".into(),
            addr: "127.0.0.1:1".parse().unwrap(),
            reason: "connection refused".into(),
        };
        assert_eq!(Failure::from(unreachable).code(), HARNESS);
        assert_eq!(
            Failure::from(RunError::Resource("x".into())).code(),
            HARNESS
        );
    }

    #[test]
    fn a_run_folder_that_does_not_read_is_bad_input_one_not_written_the_harness() {
        let read = ReportError::Read {
            path: "r/results.json".into(),
            source: io_error(),
        };
        let parse = ReportError::Parse {
            path: "r/run.json".into(),
            message: "eof".into(),
        };
        let write = ReportError::Write {
            path: "r/report.html".into(),
            source: io_error(),
        };
        assert_eq!(Failure::RunFolder(read).code(), USAGE);
        assert_eq!(Failure::RunFolder(parse).code(), USAGE);
        assert_eq!(Failure::RunFolder(write).code(), HARNESS);
        let page = ReportError::Write {
            path: "m/matrix.html".into(),
            source: io_error(),
        };
        assert_eq!(Failure::WriteOutput(page).code(), HARNESS);
    }

    #[test]
    fn a_toxiproxy_listen_address_off_loopback_is_bad_input() {
        let off = ProxyError::NotLoopback {
            addr: "192.0.2.1:8474".parse().unwrap(),
        };
        assert_eq!(Failure::from(off).code(), USAGE);
        let taken = ProxyError::Bind {
            addr: "127.0.0.1:8474".parse().unwrap(),
            source: io::Error::from(io::ErrorKind::AddrInUse),
        };
        assert_eq!(Failure::from(taken).code(), HARNESS);
    }

    #[test]
    fn a_scenario_that_does_not_load_is_bad_input_wherever_it_is_loaded() {
        // A matrix cell's scenario, loaded inside the run loop, exited 4 before.
        let unreadable = ScenarioError::Io {
            path: "m/scenarios/redis--pause.toml".into(),
            source: io_error(),
        };
        assert_eq!(Failure::from(unreadable).code(), USAGE);
    }

    #[test]
    fn a_run_error_reads_as_before_with_its_causes_and_the_reproduce_line() {
        // As `anyhow`'s `{:#}` printed it: each cause after the error, even one the error's
        // own text already holds.
        let store = RunError::Store {
            path: "store/x".into(),
            source: io_error(),
        };
        let failure = Failure::Run {
            source: Box::new(store),
            reproduce: Some("cargo run -- scenario x --seed 1".into()),
        };
        assert_eq!(
            failure.to_string(),
            "write the store at store/x: permission denied: permission denied\n  \
             reproduce: cargo run -- scenario x --seed 1"
        );
        assert_eq!(
            Failure::from(RunError::Options("read --clients: 2".into())).to_string(),
            "read --clients: 2"
        );
    }

    #[test]
    fn an_unreadable_stored_scenario_says_how_to_do_without_it() {
        let e = Failure::RunScenario(StoredScenarioError::Read {
            path: "r/scenario.toml".into(),
            source: io_error(),
        });
        assert_eq!(e.code(), USAGE);
        assert_eq!(
            e.to_string(),
            "read r/scenario.toml: permission denied\n  the run's scenario.toml tells which \
             property and deadlock threshold to check; fix it, or give both --property and \
             --deadlock-ms"
        );
    }
}
