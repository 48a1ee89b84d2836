//! Pauses and crashes the nemesis arms on a client, taken when the client reaches the point
//! (or, for a pause inside a request, when its adapter session sends a request it may stop).

use crate::recorder::Recorder;
use crate::vocab::{PausePoint, RequestOps};
use lockpick_checker::history::F;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

/// What happens to a client at its armed point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupt {
    /// Stop the world for this long (a GC pause): the client and its watchdog stand still.
    Pause { ms: u64 },
    /// The client dies on the spot, releasing nothing.
    Crash,
    /// Stop an adapter process for `ms` while one of `ops` is in flight, at a moment drawn
    /// from `seed` ([`InsidePause`]); taken by the adapter session, not the client loop.
    PauseInside(InsidePause),
}

/// A pause inside a request: what the nemesis armed, and how many requests it has tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InsidePause {
    pub ms: u64,
    pub ops: RequestOps,
    /// Seeds the delay after sending at which the stop comes (drawn with the run's seed).
    pub seed: u64,
    /// Earlier requests it was tried on whose reply came before the stop was due: those were
    /// not stopped, and the pause stayed armed for the next one.
    pub missed: u32,
}

/// An interrupt armed for a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PausePlan {
    pub point: PausePoint,
    pub interrupt: Interrupt,
}

/// Called with `true` when the client's pause starts and `false` when it ends.
pub type PauseHook = dyn Fn(bool) + Send + Sync;

/// One logical client's armed interrupt, shared between the nemesis and the client.
#[derive(Debug, Default)]
pub struct PausePoints {
    armed: Mutex<Option<PausePlan>>,
    paused: AtomicBool,
    hooks: PauseHooks,
    /// Where a pause taken inside a request is recorded (the run's history).
    recorder: RecordTo,
    /// How long the last requests of each kind took (acquire, release, renew), across the
    /// client's processes: a pause inside one draws its moment from up to their median.
    typical: Mutex<[VecDeque<Duration>; 3]>,
}

/// Where pauses inside requests are recorded, set once.
#[derive(Default)]
struct RecordTo(OnceLock<Arc<Recorder>>);

impl std::fmt::Debug for RecordTo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RecordTo({})", self.0.get().is_some())
    }
}

/// The hooks of sessions that act on a pause themselves (an adapter process is stopped with
/// SIGSTOP); held weakly, so a retired session's hook goes with it.
#[derive(Default)]
struct PauseHooks(Mutex<Vec<Weak<PauseHook>>>);

impl std::fmt::Debug for PauseHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let live = self.live().len();
        write!(f, "PauseHooks({live} live)")
    }
}

impl PauseHooks {
    fn live(&self) -> Vec<Arc<PauseHook>> {
        let mut hooks = self.0.lock().unwrap_or_else(|p| p.into_inner());
        hooks.retain(|h| h.strong_count() > 0);
        hooks.iter().filter_map(Weak::upgrade).collect()
    }
}

impl PausePoints {
    /// Arms `plan`, replacing one not yet taken. Returns false if one was pending (replaced).
    pub fn arm(&self, plan: PausePlan) -> bool {
        self.armed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .replace(plan)
            .is_none()
    }

    /// True when nothing is armed: the nemesis picks clients that are free.
    pub fn is_free(&self) -> bool {
        self.armed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_none()
    }

    /// Takes the armed interrupt if it is for `point`.
    pub fn take(&self, point: PausePoint) -> Option<Interrupt> {
        let mut armed = self.armed.lock().unwrap_or_else(|p| p.into_inner());
        match *armed {
            Some(plan) if plan.point == point => armed.take().map(|p| p.interrupt),
            _ => None,
        }
    }

    /// Takes an armed pause inside a request if it may stop a request of verb `op`.
    pub fn take_inside(&self, op: F) -> Option<InsidePause> {
        let mut armed = self.armed.lock().unwrap_or_else(|p| p.into_inner());
        match *armed {
            Some(PausePlan {
                interrupt: Interrupt::PauseInside(inside),
                ..
            }) if inside.ops.contains(op) => {
                armed.take();
                Some(inside)
            }
            _ => None,
        }
    }

    /// Arms `inside` again after a request whose reply beat the stop, unless the nemesis
    /// armed something else meanwhile. (One re-armed after the run's end stays unused.)
    pub fn rearm_inside(&self, inside: InsidePause) {
        let mut armed = self.armed.lock().unwrap_or_else(|p| p.into_inner());
        if armed.is_none() {
            *armed = Some(PausePlan {
                point: PausePoint::DuringOp,
                interrupt: Interrupt::PauseInside(inside),
            });
        }
    }

    /// Records pauses taken inside requests to `recorder` from now on.
    pub fn record_to(&self, recorder: Arc<Recorder>) {
        let _ = self.recorder.0.set(recorder);
    }

    /// Where pauses taken inside requests are recorded, if anywhere.
    pub fn recorder(&self) -> Option<&Arc<Recorder>> {
        self.recorder.0.get()
    }

    /// Notes that a request of verb `op` took `took` (sent to reply read, not paused).
    pub fn note_duration(&self, op: F, took: Duration) {
        let Some(slot) = op_slot(op) else { return };
        let mut typical = self.typical.lock().unwrap_or_else(|p| p.into_inner());
        let last = &mut typical[slot];
        if last.len() == TIMED_REQUESTS {
            last.pop_front();
        }
        last.push_back(took);
    }

    /// The median time of the last requests of verb `op` (a median, so that one request
    /// slowed by a loaded machine does not stretch the range), if any was timed.
    pub fn typical(&self, op: F) -> Option<Duration> {
        let typical = self.typical.lock().unwrap_or_else(|p| p.into_inner());
        let mut last: Vec<Duration> = typical[op_slot(op)?].iter().copied().collect();
        last.sort();
        last.get(last.len() / 2).copied()
    }

    /// Drops anything armed (the run is ending).
    pub fn disarm(&self) {
        self.armed.lock().unwrap_or_else(|p| p.into_inner()).take();
    }

    /// Starts (`true`) or ends the client's pause, telling every live hook before returning.
    pub fn set_paused(&self, paused: bool) {
        self.paused.store(paused, Ordering::SeqCst);
        for hook in self.hooks.live() {
            hook(paused);
        }
    }

    /// Calls `hook` at every start and end of a pause for as long as `hook` lives elsewhere.
    pub fn on_pause(&self, hook: &Arc<PauseHook>) {
        let mut hooks = self.hooks.0.lock().unwrap_or_else(|p| p.into_inner());
        hooks.retain(|h| h.strong_count() > 0);
        hooks.push(Arc::downgrade(hook));
    }

    /// True while the client is in a pause; its watchdog must not renew then.
    pub fn is_paused(&self) -> bool {
        self.paused.load(Ordering::SeqCst)
    }
}

/// How many of the last requests of each kind [`PausePoints::typical`] looks at.
const TIMED_REQUESTS: usize = 8;

/// The slot of a request verb in [`PausePoints::typical`].
fn op_slot(op: F) -> Option<usize> {
    [F::Acquire, F::Release, F::Renew]
        .iter()
        .position(|&f| f == op)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn armed_interrupt_is_taken_once_and_only_at_its_point() {
        let p = PausePoints::default();
        assert!(p.arm(PausePlan {
            point: PausePoint::BeforeWrite,
            interrupt: Interrupt::Pause { ms: 5 },
        }));
        assert_eq!(p.take(PausePoint::AfterAcquire), None);
        assert_eq!(
            p.take(PausePoint::BeforeWrite),
            Some(Interrupt::Pause { ms: 5 })
        );
        assert_eq!(p.take(PausePoint::BeforeWrite), None);
        assert!(p.is_free());
    }

    #[test]
    fn a_pause_inside_requests_is_taken_only_by_the_requests_it_names() {
        let p = PausePoints::default();
        let inside = InsidePause {
            ms: 5,
            ops: RequestOps::from_names(["release"]).unwrap(),
            seed: 7,
            missed: 0,
        };
        p.arm(PausePlan {
            point: PausePoint::DuringOp,
            interrupt: Interrupt::PauseInside(inside),
        });
        assert_eq!(p.take(PausePoint::BeforeRelease), None);
        assert_eq!(p.take_inside(F::Acquire), None);
        assert_eq!(p.take_inside(F::Release), Some(inside));
        assert!(p.is_free());
        let missed = InsidePause {
            missed: 1,
            ..inside
        };
        p.rearm_inside(missed);
        assert_eq!(p.take_inside(F::Release), Some(missed));
    }

    #[test]
    fn pause_hooks_hear_start_and_end_while_they_live() {
        let p = PausePoints::default();
        let heard = Arc::new(Mutex::new(Vec::new()));
        let seen = heard.clone();
        let hook: Arc<PauseHook> = Arc::new(move |paused| seen.lock().unwrap().push(paused));
        p.on_pause(&hook);
        p.set_paused(true);
        p.set_paused(false);
        drop(hook);
        p.set_paused(true);
        assert_eq!(*heard.lock().unwrap(), [true, false]);
    }
}
