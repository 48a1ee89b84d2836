//! Appends history events to `history.jsonl` as they happen. Events are numbered, stamped and
//! serialized in order under one lock into a buffer that a flusher thread hands to the kernel
//! every [`FLUSH_EVERY`] (and a recorder at once when the buffer passes [`FLUSH_BYTES`]): one
//! `write(2)` per batch instead of one per event, which is what lets a many-lock run record
//! tens of thousands of operations a second. The guarantee: every event is in the file (the
//! kernel's page cache, which survives the death of lockpick) within [`FLUSH_EVERY`] of being
//! recorded, so a SIGKILL loses at most the last few milliseconds; [`Recorder::finish`]
//! fsyncs.

use lockpick_checker::history::{Event, EventKind, Process, Value, F, FORMAT_VERSION};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The longest an event waits in the buffer before it is written.
pub const FLUSH_EVERY: Duration = Duration::from_millis(2);
/// A buffer past this is written by the recording thread at once, so a burst cannot grow it.
pub const FLUSH_BYTES: usize = 256 * 1024;

/// Why the history could not be written.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("create history {path}: {source}")]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("write history {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The run's history writer. Shared by every client and the nemesis.
pub struct Recorder {
    path: PathBuf,
    shared: Arc<Shared>,
    ops: AtomicU64,
    flusher: Option<JoinHandle<()>>,
    /// Set by [`Recorder::restart_clock`].
    started: AtomicBool,
}

/// What the recording threads and the flusher share.
struct Shared {
    /// Events numbered and serialized, not yet written.
    pending: Mutex<Pending>,
    /// The file; held while a batch is written, so batches land in order. `None`: the
    /// recorder discards (benchmarks measure what recording costs with it).
    file: Mutex<Option<File>>,
    stop: AtomicBool,
}

struct Pending {
    /// The instant history time 0 stands for.
    start: Instant,
    buf: Vec<u8>,
    next_index: u64,
    /// The first write error; recording stops there and the run reports it at the end.
    failed: Option<std::io::Error>,
}

impl Shared {
    fn new(file: Option<File>) -> Arc<Shared> {
        Arc::new(Shared {
            pending: Mutex::new(Pending {
                start: Instant::now(),
                buf: Vec::with_capacity(FLUSH_BYTES),
                next_index: 0,
                failed: None,
            }),
            file: Mutex::new(file),
            stop: AtomicBool::new(false),
        })
    }

    /// Writes what is pending. The file lock is taken first, so two flushes cannot swap
    /// their batches' order.
    fn flush(&self) {
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let batch = {
            let mut p = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            if p.buf.is_empty() {
                return;
            }
            std::mem::replace(&mut p.buf, Vec::with_capacity(FLUSH_BYTES))
        };
        if let Some(f) = file.as_mut() {
            if let Err(e) = f.write_all(&batch) {
                let mut p = self.pending.lock().unwrap_or_else(|p| p.into_inner());
                p.failed.get_or_insert(e);
            }
        }
    }
}

impl Recorder {
    /// Creates (truncates) the history file. Time 0 of the history is now.
    pub fn create(path: &Path) -> Result<Recorder, RecordError> {
        let file = File::create(path).map_err(|source| RecordError::Create {
            path: path.to_owned(),
            source,
        })?;
        let shared = Shared::new(Some(file));
        let flusher = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("history-flush".to_owned())
                .spawn(move || {
                    while !shared.stop.load(Ordering::Acquire) {
                        std::thread::sleep(FLUSH_EVERY);
                        shared.flush();
                    }
                })
                .map_err(|source| RecordError::Create {
                    path: path.to_owned(),
                    source,
                })?
        };
        Ok(Recorder {
            path: path.to_owned(),
            shared,
            ops: AtomicU64::new(0),
            flusher: Some(flusher),
            started: AtomicBool::new(false),
        })
    }

    /// A recorder that numbers and counts events but neither serializes nor writes them: the
    /// baseline against which a benchmark measures what recording a history costs.
    pub fn discarding() -> Recorder {
        Recorder {
            path: PathBuf::new(),
            shared: Shared::new(None),
            ops: AtomicU64::new(0),
            flusher: None,
            started: AtomicBool::new(false),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The instant history time 0 stands for.
    pub fn start(&self) -> Instant {
        self.shared
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .start
    }

    /// Whether the workload's clock has started ([`Recorder::restart_clock`]): what happens
    /// before is no part of the history.
    pub fn started(&self) -> bool {
        self.started.load(Ordering::Acquire)
    }

    /// Makes now time 0 of the history: the workload starts. Events recorded before would
    /// have times before 0, so this is for a history that holds none yet.
    pub fn restart_clock(&self) -> Instant {
        let mut p = self
            .shared
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        debug_assert_eq!(p.next_index, 0, "events were recorded before time 0");
        p.start = Instant::now();
        self.started.store(true, Ordering::Release);
        p.start
    }

    /// Completed client operations so far (for progress display).
    pub fn completed_ops(&self) -> u64 {
        self.ops.load(Ordering::Relaxed)
    }

    /// Records one event and returns it. Time and index are taken under one lock, and the
    /// line is serialized under it, so the file is ordered by time and index.
    pub fn record(
        &self,
        process: Process,
        kind: EventKind,
        f: F,
        lock: Option<&str>,
        value: Value,
        error: Option<String>,
    ) -> Event {
        let discarding = self.flusher.is_none();
        let mut p = self
            .shared
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let event = Event {
            v: FORMAT_VERSION,
            index: p.next_index,
            time_ns: p.start.elapsed().as_nanos() as u64,
            process,
            kind,
            f,
            lock: lock.map(str::to_owned),
            value,
            error,
        };
        p.next_index += 1;
        let full = if p.failed.is_none() && !discarding {
            serde_json::to_writer(&mut p.buf, &event).expect("events always serialize");
            p.buf.push(b'\n');
            p.buf.len() >= FLUSH_BYTES
        } else {
            false
        };
        drop(p);
        if full {
            self.shared.flush();
        }
        if process != Process::Nemesis && kind != EventKind::Invoke {
            self.ops.fetch_add(1, Ordering::Relaxed);
        }
        event
    }

    /// Writes every event recorded so far to the file now (without waiting for the flusher),
    /// and reports the first write error, if any.
    pub fn flush(&self) -> Result<(), RecordError> {
        self.shared.flush();
        let mut p = self
            .shared
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        match p.failed.take() {
            Some(source) => Err(RecordError::Write {
                path: self.path.clone(),
                source,
            }),
            None => Ok(()),
        }
    }

    /// Writes what is pending, syncs the file to disk and reports the first write error, if
    /// any.
    pub fn finish(&self) -> Result<(), RecordError> {
        self.flush()?;
        let file = self.shared.file.lock().unwrap_or_else(|p| p.into_inner());
        // Off the runtime: an fsync can take seconds under other writes.
        match file.as_ref() {
            Some(f) => {
                crate::blocking::off_runtime(|| f.sync_all()).map_err(|source| RecordError::Write {
                    path: self.path.clone(),
                    source,
                })
            }
            None => Ok(()),
        }
    }
}

impl Drop for Recorder {
    /// Stops the flusher and writes what it had not (a run that ends on an error still keeps
    /// every event it recorded).
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(t) = self.flusher.take() {
            let _ = t.join();
        }
        self.shared.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_events(rec: &Recorder) {
        rec.record(
            Process::Client(0),
            EventKind::Invoke,
            F::Acquire,
            Some("l"),
            Value::default(),
            None,
        );
        rec.record(
            Process::Nemesis,
            EventKind::Info,
            F::Partition,
            None,
            Value {
                nodes: vec!["n1".into()],
                ..Value::default()
            },
            None,
        );
    }

    #[test]
    fn recorded_events_reach_the_file_without_finish() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        let rec = Recorder::create(&path).unwrap();
        two_events(&rec);
        // The flusher writes them on its own, within a few milliseconds (waited for with a
        // generous bound: the machine may be loaded).
        let deadline = Instant::now() + Duration::from_secs(10);
        let events = loop {
            let events = lockpick_checker::history::read_history(&path).unwrap();
            if events.len() == 2 || Instant::now() > deadline {
                break events;
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        assert_eq!(events.len(), 2, "the flusher wrote the events");
        assert!(events[0].time_ns <= events[1].time_ns);
        assert_eq!(events[1].value.nodes, vec!["n1".to_owned()]);
        rec.finish().unwrap();
    }

    #[test]
    fn a_dropped_recorder_leaves_every_event_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        let rec = Arc::new(Recorder::create(&path).unwrap());
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let rec = rec.clone();
                std::thread::spawn(move || {
                    for _ in 0..5000 {
                        for kind in [EventKind::Invoke, EventKind::Ok] {
                            let p = Process::Client(t);
                            rec.record(p, kind, F::Acquire, Some("l"), Value::default(), None);
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        drop(Arc::into_inner(rec).expect("the last handle"));
        let events = lockpick_checker::history::read_history(&path).unwrap();
        assert_eq!(events.len(), 40_000);
        for (i, e) in events.iter().enumerate() {
            assert_eq!(e.index, i as u64);
        }
        assert!(events.windows(2).all(|w| w[0].time_ns <= w[1].time_ns));
    }

    #[test]
    fn a_discarding_recorder_counts_and_writes_nothing() {
        let rec = Recorder::discarding();
        two_events(&rec);
        rec.record(
            Process::Client(0),
            EventKind::Ok,
            F::Acquire,
            Some("l"),
            Value::default(),
            None,
        );
        assert_eq!(rec.completed_ops(), 1);
        rec.finish().unwrap();
    }
}
