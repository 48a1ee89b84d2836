//! Limits on a check: when one runs out the verdict is `unknown`, never a guess.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How much a check may spend, and how many threads it may use for independent parts.
#[derive(Debug, Clone)]
pub struct Budget {
    /// Wall-clock limit for the whole check.
    pub time: Option<Duration>,
    /// Limit on the memos of visited configurations of all parts together, in bytes.
    pub memory_bytes: Option<usize>,
    /// Worker threads for independent parts; 1 checks them one after another.
    pub threads: usize,
}

impl Default for Budget {
    /// One minute, 1 GiB of memo, every available core.
    fn default() -> Self {
        Budget {
            time: Some(Duration::from_secs(60)),
            memory_bytes: Some(1 << 30),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

impl Budget {
    /// No limits, one thread.
    pub fn unlimited() -> Self {
        Budget {
            time: None,
            memory_bytes: None,
            threads: 1,
        }
    }

    /// The same budget with `threads` workers.
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }
}

/// Why a search stopped before deciding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Time,
    Memory,
    /// Another part already proved the history invalid.
    Cancelled,
}

impl Stop {
    pub fn describe(self) -> &'static str {
        match self {
            Stop::Time => "the time budget ran out",
            Stop::Memory => "the memory budget ran out",
            Stop::Cancelled => "another part was already found invalid",
        }
    }
}

/// The budget as seen by one running search.
pub struct Limits<'a> {
    pub deadline: Option<Instant>,
    pub memory_bytes: Option<usize>,
    pub cancel: &'a AtomicBool,
    /// Memo bytes reported by all searches sharing these limits.
    pub memory_used: &'a AtomicUsize,
}

impl Limits<'_> {
    /// Called every few thousand search steps with the bytes the caller's memo holds now and
    /// what it reported last time (updated).
    pub fn exceeded(&self, reported: &mut usize, now_bytes: usize) -> Option<Stop> {
        if self.cancel.load(Ordering::Relaxed) {
            return Some(Stop::Cancelled);
        }
        let total = if now_bytes >= *reported {
            let d = now_bytes - *reported;
            self.memory_used.fetch_add(d, Ordering::Relaxed) + d
        } else {
            let d = *reported - now_bytes;
            self.memory_used.fetch_sub(d, Ordering::Relaxed) - d
        };
        *reported = now_bytes;
        if self.memory_bytes.is_some_and(|m| total > m) {
            return Some(Stop::Memory);
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Some(Stop::Time);
        }
        None
    }
}

impl Limits<'_> {
    /// Gives back what a finished search reported.
    pub fn release(&self, reported: usize) {
        self.memory_used.fetch_sub(reported, Ordering::Relaxed);
    }
}
