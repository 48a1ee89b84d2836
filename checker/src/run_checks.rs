//! Every check a scenario run gets, in one call, so a run and a re-check agree; and the same
//! checks over a history file in one streaming pass, in memory that does not grow with it.

use crate::exposure::{self, with_exposure, ExposureStream, Exposures};
use crate::history::{Event, EventKind, EventRef, HistoryReader, Process, ReadError, TornLine, F};
use crate::lin_search::Budget;
use crate::lock::{LockCheckParams, LockOps, LockReport, LockStream};
use crate::results::LinSummary;
use crate::verdict::Verdict;
use std::io::BufRead;
use std::path::Path;
use std::time::Duration;

/// The findings of every check of a run.
#[derive(Debug, Clone)]
pub struct RunChecks {
    pub lock: LockReport,
    /// `None` when no lock model fits the history (see
    /// [`lock_model_for`](crate::lock::lock_model_for)).
    pub linearizability: Option<LinSummary>,
    /// Each fault instance of the run judged by its fault's exposure rule; `None` when the
    /// check was not told the run's faults (a history checked on its own).
    pub exposure: Option<Exposures>,
}

impl RunChecks {
    /// Every check's verdict, merged; a valid run that no fault exposed is not exposed.
    pub fn verdict(&self) -> Verdict {
        let lin = self
            .linearizability
            .as_ref()
            .map_or(Verdict::Valid, |l| l.verdict);
        let merged = self.lock.verdict.merge(lin);
        match &self.exposure {
            Some(exposure) => with_exposure(merged, exposure),
            None => merged,
        }
    }

    /// Why no fault of the run exposed the lock, if none did.
    pub fn not_exposed(&self) -> Option<String> {
        self.exposure.as_ref().and_then(|e| e.summary().err())
    }

    /// What exposed the lock, when a fault did.
    pub fn exposed_by(&self) -> Option<String> {
        self.exposure.as_ref().and_then(|e| e.summary().ok())
    }
}

/// Budget of the linearizability check in a run: lock histories are easy for the search, so
/// running out means something pathological, reported as unknown rather than waited for.
fn run_budget() -> Budget {
    Budget {
        time: Some(Duration::from_secs(30)),
        memory_bytes: Some(1 << 30),
        threads: 1,
    }
}

/// Every check, fed one event at a time.
pub struct RunStream {
    params: LockCheckParams,
    lock: LockStream,
    lin: LockOps,
    exposure: Option<ExposureStream>,
    /// Events taken.
    pub events: u64,
    /// Client completions (`ok`, `fail`, `info`) taken.
    pub completions: u64,
    /// Time of the last event.
    pub end_ns: u64,
}

impl RunStream {
    pub fn new(params: &LockCheckParams) -> Self {
        RunStream {
            params: *params,
            lock: LockStream::new(params),
            lin: LockOps::default(),
            exposure: None,
            events: 0,
            completions: 0,
            end_ns: 0,
        }
    }

    /// Every check, and each fault instance judged by the rule `plan` gives its fault.
    pub fn with_exposure(params: &LockCheckParams, plan: exposure::Plan) -> Self {
        RunStream {
            exposure: Some(ExposureStream::new(plan)),
            ..RunStream::new(params)
        }
    }

    /// Takes the next event, in history order.
    pub fn push(&mut self, e: &EventRef<'_>) {
        self.events += 1;
        self.end_ns = e.time_ns;
        if matches!(e.process, Process::Client(_))
            && e.kind != EventKind::Invoke
            && e.f != F::Notice
        {
            self.completions += 1;
        }
        self.lock.push(e);
        self.lin.push(e);
        if let Some(x) = &mut self.exposure {
            x.push(e);
        }
    }

    pub fn finish(self) -> RunChecks {
        RunChecks {
            lock: self.lock.finish(),
            linearizability: self.lin.check(self.params.property, &run_budget()),
            exposure: self.exposure.map(ExposureStream::finish),
        }
    }
}

/// Lock-safety checks and linearizability of the lock operations.
pub fn check_run(events: &[Event], params: &LockCheckParams) -> RunChecks {
    let mut stream = RunStream::new(params);
    for e in events {
        stream.push(&e.as_ref());
    }
    stream.finish()
}

/// What [`check_run_file`] found.
#[derive(Debug, Clone)]
pub struct FileChecks {
    pub checks: RunChecks,
    /// Events read.
    pub events: u64,
    /// Client completions read (the run's operations).
    pub completions: u64,
    /// Time of the last event read.
    pub end_ns: u64,
    /// A last line cut off mid-write, left out.
    pub torn: Option<TornLine>,
}

/// Reads a history file line by line and runs every check in the same pass.
pub fn check_run_file(path: &Path, params: &LockCheckParams) -> Result<FileChecks, ReadError> {
    check_run_reader(HistoryReader::open(path)?, params)
}

/// [`check_run_file`], and each fault instance judged by the rule `plan` gives its fault: the
/// checks of a scenario run, whose verdict is not-exposed when no fault exposed the lock.
pub fn check_run_file_exposed(
    path: &Path,
    params: &LockCheckParams,
    plan: exposure::Plan,
) -> Result<FileChecks, ReadError> {
    stream_reader(
        HistoryReader::open(path)?,
        RunStream::with_exposure(params, plan),
    )
}

/// [`check_run_file_exposed`] over any reader: a soak's check reads the history as it is
/// written, through a reader that waits at its end until the run is over.
pub fn check_run_reader_exposed<R: BufRead>(
    reader: HistoryReader<R>,
    params: &LockCheckParams,
    plan: exposure::Plan,
) -> Result<FileChecks, ReadError> {
    stream_reader(reader, RunStream::with_exposure(params, plan))
}

/// [`check_run_file`] over any reader.
pub fn check_run_reader<R: BufRead>(
    reader: HistoryReader<R>,
    params: &LockCheckParams,
) -> Result<FileChecks, ReadError> {
    stream_reader(reader, RunStream::new(params))
}

fn stream_reader<R: BufRead>(
    mut reader: HistoryReader<R>,
    mut stream: RunStream,
) -> Result<FileChecks, ReadError> {
    while let Some(e) = reader.next_event()? {
        stream.push(&e);
    }
    let (events, completions, end_ns) = (stream.events, stream.completions, stream.end_ns);
    Ok(FileChecks {
        checks: stream.finish(),
        events,
        completions,
        end_ns,
        torn: reader.torn(),
    })
}
