//! Pauses and crashes the nemesis arms on a client, taken when the client reaches the point.

use crate::vocab::PausePoint;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// What happens to a client at its armed point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupt {
    /// Stop the world for this long (a GC pause): the client and its watchdog stand still.
    Pause { ms: u64 },
    /// The client dies on the spot, releasing nothing.
    Crash,
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
