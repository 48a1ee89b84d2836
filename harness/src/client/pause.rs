//! Pauses and crashes the nemesis arms on a client, taken when the client reaches the point.

use crate::scenario::PausePoint;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

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

/// One logical client's armed interrupt, shared between the nemesis and the client.
#[derive(Debug, Default)]
pub struct PausePoints {
    armed: Mutex<Option<PausePlan>>,
    paused: AtomicBool,
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

    pub fn set_paused(&self, paused: bool) {
        self.paused.store(paused, Ordering::SeqCst);
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
}
