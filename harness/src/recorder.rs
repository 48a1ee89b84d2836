//! Appends history events to `history.jsonl` as they happen, one write per event, so a crash
//! or Ctrl-C keeps everything recorded so far.

use lockpick_checker::history::{Event, EventKind, Process, Value, F, FORMAT_VERSION};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

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
    inner: Mutex<Inner>,
    ops: AtomicU64,
}

struct Inner {
    /// The instant history time 0 stands for.
    start: Instant,
    file: File,
    next_index: u64,
    /// The first write error; recording stops there and the run reports it at the end.
    failed: Option<std::io::Error>,
}

impl Recorder {
    /// Creates (truncates) the history file. Time 0 of the history is now.
    pub fn create(path: &Path) -> Result<Recorder, RecordError> {
        let file = File::create(path).map_err(|source| RecordError::Create {
            path: path.to_owned(),
            source,
        })?;
        Ok(Recorder {
            path: path.to_owned(),
            inner: Mutex::new(Inner {
                start: Instant::now(),
                file,
                next_index: 0,
                failed: None,
            }),
            ops: AtomicU64::new(0),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The instant history time 0 stands for.
    pub fn start(&self) -> Instant {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).start
    }

    /// Makes now time 0 of the history: the workload starts. Events recorded before would
    /// have times before 0, so this is for a history that holds none yet.
    pub fn restart_clock(&self) -> Instant {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        debug_assert_eq!(inner.next_index, 0, "events were recorded before time 0");
        inner.start = Instant::now();
        inner.start
    }

    /// Completed client operations so far (for progress display).
    pub fn completed_ops(&self) -> u64 {
        self.ops.load(Ordering::Relaxed)
    }

    /// Records one event and returns it. Time and index are taken under one lock so the file
    /// is ordered by time.
    pub fn record(
        &self,
        process: Process,
        kind: EventKind,
        f: F,
        lock: Option<&str>,
        value: Value,
        error: Option<String>,
    ) -> Event {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let event = Event {
            v: FORMAT_VERSION,
            index: inner.next_index,
            time_ns: inner.start.elapsed().as_nanos() as u64,
            process,
            kind,
            f,
            lock: lock.map(str::to_owned),
            value,
            error,
        };
        if inner.failed.is_none() {
            let mut line = serde_json::to_vec(&event).expect("events always serialize");
            line.push(b'\n');
            // One write(2) per line: the kernel keeps it even if this process is killed next.
            if let Err(e) = inner.file.write_all(&line) {
                inner.failed = Some(e);
            }
        }
        inner.next_index += 1;
        if process != Process::Nemesis && kind != EventKind::Invoke {
            self.ops.fetch_add(1, Ordering::Relaxed);
        }
        event
    }

    /// Flushes to disk and reports the first write error, if any.
    pub fn finish(&self) -> Result<(), RecordError> {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(source) = inner.failed.take() {
            return Err(RecordError::Write {
                path: self.path.clone(),
                source,
            });
        }
        inner.file.sync_all().map_err(|source| RecordError::Write {
            path: self.path.clone(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_events_read_back_in_order() {
        let dir = std::env::temp_dir().join(format!("lockpick-rec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("history.jsonl");
        let rec = Recorder::create(&path).unwrap();
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
        // Readable before finish(): nothing waits in a user-space buffer.
        let events = lockpick_checker::history::read_history(&path).unwrap();
        assert_eq!(events.len(), 2);
        assert!(events[0].time_ns <= events[1].time_ns);
        assert_eq!(events[1].value.nodes, vec!["n1".to_owned()]);
        rec.finish().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
