//! [`check_locks`]: the lock checks over a history held in memory, through the same streaming
//! checker a file is read with.

use super::params::LockCheckParams;
use super::report::LockReport;
use super::stream::LockStream;
use crate::history::Event;
use crate::server_record::ServerEvent;

/// Checks a lock history for double holders, accepted stale writes, lost counter updates,
/// deadlocks and lockouts, and judges them against `params.property`.
///
/// Preconditions: `events` are in history order (as read by
/// [`read_history`](crate::history::read_history)); the counter, when there is one, starts at 0.
/// The verdict is unknown when no acquire ever succeeded or a counter history has no final read.
pub fn check_locks(events: &[Event], params: &LockCheckParams) -> LockReport {
    let mut stream = LockStream::new(params);
    for e in events {
        stream.push(&e.as_ref());
    }
    stream.finish()
}

/// [`check_locks`], with the server's own record of the locks (`server.jsonl`) set beside the
/// holders' beliefs: the report's `server` view, and silent losses and re-takes among its
/// observations (never changing the verdict).
pub fn check_locks_with_server(
    events: &[Event],
    params: &LockCheckParams,
    server: &[ServerEvent],
) -> LockReport {
    let mut stream = LockStream::with_server_record(params, server.to_vec());
    for e in events {
        stream.push(&e.as_ref());
    }
    stream.finish()
}
