//! Every check a scenario run gets, in one call, so a run and a re-check agree; and the same
//! checks over a history file in one streaming pass, in memory that does not grow with it.

use crate::fault_reached::{with_reach, Needs, ReachStream};
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
    /// Whether the run's fault reached the size the property needed (`Err`: why it tested
    /// nothing); `None` when the check was not told what the fault needed.
    pub reach: Option<Result<String, String>>,
}

impl RunChecks {
    /// Every check's verdict, merged; a valid run whose fault tested nothing is not tested.
    pub fn verdict(&self) -> Verdict {
        let lin = self
            .linearizability
            .as_ref()
            .map_or(Verdict::Valid, |l| l.verdict);
        let merged = self.lock.verdict.merge(lin);
        match &self.reach {
            Some(reach) => with_reach(merged, reach),
            None => merged,
        }
    }

    /// Why the run tested nothing, if its fault fell short.
    pub fn not_tested(&self) -> Option<&str> {
        self.reach
            .as_ref()
            .and_then(|r| r.as_ref().err())
            .map(String::as_str)
    }

    /// What the run's fault reached, when it did.
    pub fn reached(&self) -> Option<&str> {
        self.reach
            .as_ref()
            .and_then(|r| r.as_ref().ok())
            .map(String::as_str)
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
    reach: Option<ReachStream>,
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
            reach: None,
            events: 0,
            completions: 0,
            end_ns: 0,
        }
    }

    /// Every check, and whether the run's fault reached what `needs` says it must.
    pub fn with_needs(params: &LockCheckParams, needs: Needs) -> Self {
        RunStream {
            reach: Some(ReachStream::new(needs)),
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
        if let Some(r) = &mut self.reach {
            r.push(e);
        }
    }

    pub fn finish(self) -> RunChecks {
        RunChecks {
            lock: self.lock.finish(),
            linearizability: self.lin.check(self.params.property, &run_budget()),
            reach: self.reach.map(ReachStream::finish),
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

/// [`check_run_file`], and whether the run's fault reached what `needs` says it must: the
/// checks of a scenario run, whose verdict is not-tested when its fault tested nothing.
pub fn check_run_file_reach(
    path: &Path,
    params: &LockCheckParams,
    needs: Needs,
) -> Result<FileChecks, ReadError> {
    stream_reader(
        HistoryReader::open(path)?,
        RunStream::with_needs(params, needs),
    )
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
