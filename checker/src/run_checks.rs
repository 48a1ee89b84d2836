//! Every check a scenario run gets, in one call, so a run and a re-check agree; and the same
//! checks over a history file in one streaming pass, in memory that does not grow with it.

use crate::exposure::{self, with_exposure, ExposureStream, Exposures};
use crate::history::{Event, EventKind, EventRef, HistoryReader, Process, ReadError, TornLine, F};
use crate::lin_search::Budget;
use crate::lock::{LockCheckParams, LockOps, LockReport, LockStream, Property};
use crate::results::{LinSummary, RunResults};
use crate::server_record::ServerEvent;
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
        // Under `fenced` only the resource's correctness counts: a lock that broke its lease
        // (a grant before the holder's lease ran out, which is what the lease model finds) is
        // what the fence absorbs, an observation as a double holder is; and a search that
        // could not decide it leaves the resource's verdict as it is.
        let lin = match self.lock.property {
            Property::Fenced => Verdict::Valid,
            Property::Exclusive => lin,
        };
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

    /// A stored run's results with these checks in place of the ones it was written with:
    /// what a check of its history again (`lockpick check`, `matrix --recheck`) makes of it.
    /// What the run itself recorded (its workload, operations, server, library) is kept.
    pub fn into_results(self, mut r: RunResults) -> RunResults {
        r.verdict = self.verdict();
        r.not_exposed = self.not_exposed();
        r.exposed_by = self.exposed_by();
        r.exposures = self.exposure;
        r.lock = self.lock;
        r.linearizability = self.linearizability;
        r
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
    /// Under `fenced`, whether a lock the streaming check left undecided or found violated is
    /// searched from a second reading (see [`check_growing_run_file`] for when it is not).
    search_fenced_again: bool,
    /// Events taken.
    pub events: u64,
    /// Client completions (`ok`, `fail`, `info`) taken.
    pub completions: u64,
    /// Time of the last event.
    pub end_ns: u64,
}

impl RunStream {
    /// Every check; the lock operations are kept for the linearizability check at the end,
    /// as a stream that cannot be read twice needs.
    pub fn new(params: &LockCheckParams) -> Self {
        RunStream {
            params: *params,
            lock: LockStream::new(params),
            lin: LockOps::default(),
            exposure: None,
            search_fenced_again: true,
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

    /// The same checks, with the server's own record of the locks set beside the holders'
    /// beliefs ([`LockStream::with_server_record`]). Before any event is pushed.
    pub fn with_server_record(mut self, server: Vec<ServerEvent>) -> Self {
        debug_assert_eq!(self.events, 0, "the server record comes before the history");
        self.lock = LockStream::with_server_record(&self.params, server);
        self
    }

    /// Every check, in memory for what is open: linearizability is checked as the events go
    /// by, and [`RunStream::finish_reading_again`] reads the history a second time for a
    /// lock found violated or not followed.
    fn bounded(params: &LockCheckParams, plan: Option<exposure::Plan>) -> Self {
        RunStream {
            lin: LockOps::streaming(params.property),
            exposure: plan.map(ExposureStream::new),
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

    /// The findings of a stream made by [`RunStream::new`] or [`RunStream::with_exposure`].
    pub fn finish(self) -> RunChecks {
        self.finish_reading_again(|_| Ok::<(), std::convert::Infallible>(()))
            .unwrap_or_else(|never| match never {})
    }

    /// The findings; `read_again` pushes the history's events, in the same order, once more
    /// to what it is given, when the linearizability check needs them (a stream made by
    /// [`RunStream::new`] never does).
    fn finish_reading_again<E>(
        self,
        read_again: impl FnOnce(&mut dyn FnMut(&EventRef<'_>)) -> Result<(), E>,
    ) -> Result<RunChecks, E> {
        let budget = run_budget();
        let property = self.params.property;
        let linearizability = match self.lin.check(property, &budget) {
            Ok(summary) => summary,
            Err(recheck) if property == Property::Fenced && !self.search_fenced_again => {
                Some(recheck.unsearched(
                    "not searched from a second reading: under `fenced` the resource's check \
                     decides the verdict, and this history would be read and searched whole",
                ))
            }
            Err(recheck) => {
                let mut again = recheck.ops();
                read_again(&mut |e| again.push(e))?;
                Some(recheck.finish(again, &budget))
            }
        };
        Ok(RunChecks {
            lock: self.lock.finish(),
            linearizability,
            exposure: self.exposure.map(ExposureStream::finish),
        })
    }
}

/// Lock-safety checks and linearizability of the lock operations.
pub fn check_run(events: &[Event], params: &LockCheckParams) -> RunChecks {
    let mut stream = RunStream::bounded(params, None);
    for e in events {
        stream.push(&e.as_ref());
    }
    stream
        .finish_reading_again(|push| {
            events.iter().for_each(|e| push(&e.as_ref()));
            Ok::<(), std::convert::Infallible>(())
        })
        .unwrap_or_else(|never| match never {})
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

/// Reads a history file line by line and runs every check in the same pass, in memory for
/// what is open; a lock whose operations the streaming linearizability check finds violated
/// (or cannot follow) is searched, and explained, from a second reading.
pub fn check_run_file(path: &Path, params: &LockCheckParams) -> Result<FileChecks, ReadError> {
    stream_file(path, RunStream::bounded(params, None))
}

/// [`check_run_file`], and each fault instance judged by the rule `plan` gives its fault: the
/// checks of a scenario run, whose verdict is not-exposed when no fault exposed the lock.
pub fn check_run_file_exposed(
    path: &Path,
    params: &LockCheckParams,
    plan: exposure::Plan,
) -> Result<FileChecks, ReadError> {
    stream_file(path, RunStream::bounded(params, Some(plan)))
}

/// [`check_run_file`], each fault instance judged by the rule `plan` gives its fault when there
/// is one ([`check_run_file_exposed`]), and the server's own record of the locks set beside
/// the holders' beliefs when there is one (a run folder's `server.jsonl`, read with
/// [`read_server_record_in`](crate::server_record::read_server_record_in)); without either it
/// is [`check_run_file`].
pub fn check_run_file_with_server(
    path: &Path,
    params: &LockCheckParams,
    plan: Option<exposure::Plan>,
    server: Option<Vec<ServerEvent>>,
) -> Result<FileChecks, ReadError> {
    let stream = RunStream::bounded(params, plan);
    let stream = match server {
        Some(events) => stream.with_server_record(events),
        None => stream,
    };
    stream_file(path, stream)
}

/// [`check_run_file_exposed`] over `reader`, which reads the history file at `path` while it
/// is written (a soak's check, through a reader that waits at the file's end until the run is
/// over): in memory for what is open, the file read again from its start when the
/// linearizability check needs it, by then whole (not under `fenced`, where it cannot change
/// the verdict).
pub fn check_growing_run_file<R: BufRead>(
    reader: HistoryReader<R>,
    path: &Path,
    params: &LockCheckParams,
    plan: exposure::Plan,
) -> Result<FileChecks, ReadError> {
    // A soak's history is an hour of operations: searching a lock the stream did not decide
    // took 20 s and 1.2 GiB at the end of one (a lease model the stream gave up on), and
    // under `fenced` its answer cannot change the verdict (the stream's own finding of a
    // violation is kept).
    let stream = RunStream {
        search_fenced_again: false,
        ..RunStream::bounded(params, Some(plan))
    };
    stream_events(reader, stream, |push| {
        let mut again = HistoryReader::open(path)?;
        while let Some(e) = again.next_event()? {
            push(&e);
        }
        Ok(())
    })
}

/// [`check_run_file`] over any reader, which cannot be read twice: the lock operations are
/// kept for the linearizability check at the end.
pub fn check_run_reader<R: BufRead>(
    reader: HistoryReader<R>,
    params: &LockCheckParams,
) -> Result<FileChecks, ReadError> {
    stream_reader(reader, RunStream::new(params))
}

fn stream_reader<R: BufRead>(
    reader: HistoryReader<R>,
    stream: RunStream,
) -> Result<FileChecks, ReadError> {
    stream_events(reader, stream, |_| Ok(()))
}

/// The file's checks, reading it a second time if the linearizability check asks to.
fn stream_file(path: &Path, stream: RunStream) -> Result<FileChecks, ReadError> {
    stream_events(HistoryReader::open(path)?, stream, |push| {
        let mut reader = HistoryReader::open(path)?;
        while let Some(e) = reader.next_event()? {
            push(&e);
        }
        Ok(())
    })
}

fn stream_events<R: BufRead>(
    mut reader: HistoryReader<R>,
    mut stream: RunStream,
    read_again: impl FnOnce(&mut dyn FnMut(&EventRef<'_>)) -> Result<(), ReadError>,
) -> Result<FileChecks, ReadError> {
    while let Some(e) = reader.next_event()? {
        stream.push(&e);
    }
    let (events, completions, end_ns) = (stream.events, stream.completions, stream.end_ns);
    let torn = reader.torn();
    // The first reader's buffer is not needed by the second.
    drop(reader);
    Ok(FileChecks {
        checks: stream.finish_reading_again(read_again)?,
        events,
        completions,
        end_ns,
        torn,
    })
}
