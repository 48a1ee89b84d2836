//! A pause inside a request (`client-pause` at point `during-op`): the adapter process is
//! stopped at a moment drawn from the pause's seed, between sending a request and reading its
//! reply, so the library may be stopped between two of its own round trips (a GET and the DEL
//! that should have gone with it).
//!
//! The moment is drawn uniformly from zero to the time requests of that kind took lately for
//! this client (a loopback library call takes 0.2–2 ms; `tokio`'s timer has a millisecond
//! grain, so the wait is a `ppoll` on the adapter's stdout on a blocking thread, which also
//! sees a reply that comes first). When the reply beats the stop, nothing is stopped and the
//! pause stays armed for the next such request (counted in its `missed`). When the stop was
//! sent, lockpick waits until the adapter is really stopped and then looks whether its reply
//! had already been written: the history's `pause` says which request the pause fell in, how
//! long after sending, and whether the reply had come.

use crate::client::{InsidePause, PausePoints};
use lockpick_checker::history::{EventKind, Process, Value, F};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::os::fd::RawFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The range a pause draws its moment from before any request of its kind was timed.
const UNTIMED: Duration = Duration::from_millis(1);
/// How long to wait for a stopped adapter's threads to be seen stopped.
const STOP_SETTLE: Duration = Duration::from_millis(100);

/// The request a pause may fall in.
pub(super) struct Request<'a> {
    pub points: &'a Arc<PausePoints>,
    /// The adapter's processes, whose state shows when the stop took hold.
    pub pids: Vec<u32>,
    /// The history's process id of the adapter.
    pub process: u64,
    pub op: F,
    pub id: u64,
    /// The adapter's stdout, and whether lockpick already holds part of a reply read from it.
    pub fd: RawFd,
    pub buffered: bool,
    pub sent: Instant,
}

/// Where a stop landed.
struct Landed {
    after: Duration,
    /// The reply was already in the pipe when the adapter stood still.
    reply_came: bool,
}

/// Tries `inside` on `req`: stops the adapter at its drawn moment unless the reply comes
/// first (then re-arms it), records the pause and its end, and returns once the adapter runs
/// again. True if it stopped the adapter.
pub(super) async fn pause_inside(req: Request<'_>, inside: InsidePause) -> bool {
    let typical = req.points.typical(req.op).unwrap_or(UNTIMED);
    let mut rng = ChaCha8Rng::seed_from_u64(inside.seed ^ u64::from(inside.missed));
    let delay = Duration::from_micros(rng.random_range(0..=typical.as_micros() as u64));
    if req.buffered {
        req.points.rearm_inside(InsidePause {
            missed: inside.missed + 1,
            ..inside
        });
        return false;
    }
    let (points, pids, fd, sent) = (req.points.clone(), req.pids.clone(), req.fd, req.sent);
    let landed = tokio::task::spawn_blocking(move || {
        let due = sent + delay;
        if readable(fd, due.saturating_duration_since(Instant::now())) {
            return None;
        }
        // The stop reaches the adapter's processes first thing in the hook.
        let after = sent.elapsed();
        points.set_paused(true);
        wait_stopped(&pids);
        Some(Landed {
            after,
            reply_came: readable(fd, Duration::ZERO),
        })
    })
    .await
    .ok()
    .flatten();
    let Some(landed) = landed else {
        req.points.rearm_inside(InsidePause {
            missed: inside.missed + 1,
            ..inside
        });
        return false;
    };
    let resume = Resume {
        points: req.points.clone(),
        process: req.process,
        done: false,
    };
    let when = if landed.reply_came {
        "its reply had already come"
    } else {
        "no reply yet"
    };
    record(
        req.points,
        F::Pause,
        Value {
            client: Some(req.process),
            point: Some("during-op".to_owned()),
            ms: Some(inside.ms),
            note: Some(format!(
                "in {} request {} of process {}, {} µs after it was sent (drawn from 0–{} µs; {} earlier {} replied first); {when}",
                req.op,
                req.id,
                req.process,
                landed.after.as_micros(),
                typical.as_micros(),
                inside.missed,
                if inside.missed == 1 { "request" } else { "requests" },
            )),
            ..Value::default()
        },
    );
    tokio::time::sleep(Duration::from_millis(inside.ms)).await;
    resume.now(None);
    true
}

/// Ends a pause inside a request; if the request is abandoned mid-pause (the run was
/// interrupted), when it is dropped, so no adapter stays stopped.
struct Resume {
    points: Arc<PausePoints>,
    process: u64,
    done: bool,
}

impl Resume {
    fn now(mut self, note: Option<String>) {
        self.end(note);
    }

    fn end(&mut self, note: Option<String>) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        self.points.set_paused(false);
        record(
            &self.points,
            F::Resume,
            Value {
                client: Some(self.process),
                note,
                ..Value::default()
            },
        );
    }
}

impl Drop for Resume {
    fn drop(&mut self) {
        self.end(Some("cut short: the request was abandoned".to_owned()));
    }
}

fn record(points: &PausePoints, f: F, value: Value) {
    if let Some(recorder) = points.recorder() {
        recorder.record(Process::Nemesis, EventKind::Info, f, None, value, None);
    }
}

/// Whether `fd` has something to read (or is closed) within `wait`.
fn readable(fd: RawFd, wait: Duration) -> bool {
    let mut poll = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let timeout = libc::timespec {
        tv_sec: wait.as_secs() as libc::time_t,
        tv_nsec: wait.subsec_nanos() as libc::c_long,
    };
    loop {
        // SAFETY: one valid pollfd and a valid timespec, both living across the call.
        let rc = unsafe { libc::ppoll(&mut poll, 1, &timeout, std::ptr::null()) };
        if rc >= 0 {
            return rc > 0;
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return true;
        }
    }
}

/// Waits (a bounded while) until every process in `pids` is seen stopped, so that anything
/// it wrote before the stop is in the pipe when lockpick looks.
fn wait_stopped(pids: &[u32]) {
    let until = Instant::now() + STOP_SETTLE;
    while Instant::now() < until {
        if pids.iter().all(|&pid| stopped(pid)) {
            return;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Whether process `pid` is stopped (or gone), from `/proc/<pid>/stat`.
fn stopped(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return true;
    };
    let state = stat
        .rfind(')')
        .and_then(|at| stat[at + 1..].split_whitespace().next());
    matches!(state, Some("T" | "t" | "Z" | "X"))
}
