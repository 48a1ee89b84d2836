//! The server's own record of the locks as a run writes it (`server.jsonl`, the format of
//! `lockpick_checker::server_record`): what the watchers of a kind's nodes ([`super::Watch`])
//! see happen to the lock's records, one line per change, on the history's clock.
//!
//! Every line is numbered, stamped and written under one lock with one `write(2)`, as it comes:
//! a run killed mid-way leaves every line seen so far (at most the last one torn, which the
//! reader leaves out). The watchers of several nodes share one log, so the index has no gaps
//! and the time never decreases along the file, whichever node's line comes next.

use crate::recorder::{RecordError, Recorder};
use lockpick_checker::server_record::{RecordChange, ServerEvent, SERVER_RECORD_VERSION};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The run's `server.jsonl` writer, shared by the watchers of every node.
pub struct ServerLog {
    path: PathBuf,
    /// The history's recorder, whose time 0 is the record's too.
    clock: Arc<Recorder>,
    inner: Mutex<Inner>,
}

struct Inner {
    file: File,
    next_index: u64,
    last_ns: u64,
    /// The first write error; writing stops there and [`ServerLog::finish`] reports it.
    failed: Option<std::io::Error>,
}

/// One change a watcher saw, before it is numbered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// When it was observed, on the history's clock ([`ServerLog::now_ns`]).
    pub at_ns: u64,
    pub node: String,
    pub key: String,
    pub event: RecordChange,
    pub value: Option<String>,
    /// The time to live left at `at_ns`.
    pub ttl_ms: Option<u64>,
}

impl ServerLog {
    /// Creates (truncates) the record at `path` (a run folder's
    /// [`SERVER_RECORD_FILE`](lockpick_checker::server_record::SERVER_RECORD_FILE)), on the
    /// clock of `clock`, the run's history recorder.
    pub fn create(path: &Path, clock: Arc<Recorder>) -> Result<ServerLog, RecordError> {
        let file = File::create(path).map_err(|source| RecordError::Create {
            path: path.to_owned(),
            source,
        })?;
        Ok(ServerLog {
            path: path.to_owned(),
            clock,
            inner: Mutex::new(Inner {
                file,
                next_index: 0,
                last_ns: 0,
                failed: None,
            }),
        })
    }

    /// Now on the history's clock: nanoseconds since the workload started, 0 before (what
    /// happens before time 0 is no part of the run, and the history has nothing earlier).
    pub fn now_ns(&self) -> u64 {
        self.ns_at(Instant::now())
    }

    /// `at` on the history's clock, as [`ServerLog::now_ns`].
    pub fn ns_at(&self, at: Instant) -> u64 {
        if !self.clock.started() {
            return 0;
        }
        at.saturating_duration_since(self.clock.start()).as_nanos() as u64
    }

    /// Writes `change` as the record's next line. A time before the last line's (another
    /// node's line written first, or a change read late) is moved up to it, and its time to
    /// live shortened by as much, so the moment the server will expire the record stays the
    /// server's own.
    pub fn write(&self, change: Change) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if inner.failed.is_some() {
            return;
        }
        let time_ns = change.at_ns.max(inner.last_ns);
        let late_ms = (time_ns - change.at_ns) / 1_000_000;
        let event = ServerEvent {
            v: SERVER_RECORD_VERSION,
            index: inner.next_index,
            time_ns,
            node: change.node,
            key: change.key,
            event: change.event,
            value: change.value,
            ttl_ms: change.ttl_ms.map(|t| t.saturating_sub(late_ms)),
        };
        let mut line = serde_json::to_vec(&event).expect("a server event serializes");
        line.push(b'\n');
        // One write per line: the file is whole up to the last line at any moment.
        match inner.file.write_all(&line) {
            Ok(()) => {
                inner.next_index += 1;
                inner.last_ns = time_ns;
            }
            Err(e) => inner.failed = Some(e),
        }
    }

    /// Lines written so far.
    pub fn lines(&self) -> u64 {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .next_index
    }

    /// After the watchers stopped: fsyncs the record, or says the first write that failed.
    pub fn finish(&self) -> Result<(), RecordError> {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let result = match inner.failed.take() {
            Some(e) => Err(e),
            // Off the runtime: an fsync can take seconds under other writes.
            None => crate::blocking::off_runtime(|| inner.file.sync_all()),
        };
        result.map_err(|source| RecordError::Write {
            path: self.path.clone(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockpick_checker::server_record::read_server_record;

    #[test]
    fn lines_are_numbered_and_a_late_one_is_moved_up_with_its_ttl_shortened() {
        let dir = tempfile::tempdir().unwrap();
        let recorder = Arc::new(Recorder::create(&dir.path().join("history.jsonl")).unwrap());
        recorder.restart_clock();
        let path = dir.path().join("server.jsonl");
        let log = ServerLog::create(&path, recorder).unwrap();
        let change = |at_ns, event, value: Option<&str>, ttl_ms| Change {
            at_ns,
            node: "n1".into(),
            key: "lockpick:lock:lock".into(),
            event,
            value: value.map(str::to_owned),
            ttl_ms,
        };
        log.write(change(
            50_000_000,
            RecordChange::Set,
            Some("0-a"),
            Some(300),
        ));
        log.write(change(40_000_000, RecordChange::Renewed, None, Some(300)));
        log.write(change(60_000_000, RecordChange::Deleted, None, None));
        log.finish().unwrap();
        let read = read_server_record(&path).unwrap();
        let got: Vec<(u64, u64, Option<u64>)> = read
            .events
            .iter()
            .map(|e| (e.index, e.time_ns, e.ttl_ms))
            .collect();
        assert_eq!(
            got,
            [
                (0, 50_000_000, Some(300)),
                (1, 50_000_000, Some(290)),
                (2, 60_000_000, None)
            ]
        );
    }
}
