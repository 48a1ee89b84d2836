//! What a lock library told its holder, unasked (a `notice` in the history: `lost`,
//! `suspended`, `reconnected`), set beside when the history shows the lock was actually lost:
//! the holder's lease end or another process's grant, whichever came first. A late notice is
//! information, not a violation: what makes it unsafe is a write between losing and learning,
//! and the double-holder and stale-write checks judge that.

use serde::{Deserialize, Serialize};

/// One notice and the loss it is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Learned {
    /// The client process the library told.
    pub process: u64,
    /// What it was told: `lost`, `suspended` or `reconnected`.
    pub event: String,
    /// The notice's line in the history, and when it came (the holder learned).
    pub index: u64,
    pub learned_ns: u64,
    /// The lock the process held (or last held) when told; `None` if it had never held one.
    pub lock: Option<String>,
    /// The token the notice named, or else the holding's.
    pub token: Option<u64>,
    /// The library's words, as the adapter passed them.
    pub reason: Option<String>,
    /// The `acquire ok` of the holding the notice is about.
    pub acquire_index: Option<u64>,
    /// When the history shows the lock was lost, and the line that shows it (the other
    /// process's `acquire ok`, or the holder's acquire or renewal whose lease ran out then);
    /// `None` when the history shows neither.
    pub lost_ns: Option<u64>,
    pub lost_index: Option<u64>,
    /// How it was lost: `lease ran out` or `granted to process N`.
    pub lost_by: Option<String>,
    /// Learned minus lost, in nanoseconds: negative when the library told before the loss.
    pub delay_ns: Option<i64>,
    /// The holder's writes invoked between losing and learning (their invoke lines): these,
    /// not the delay itself, are what makes a late notice unsafe.
    pub writes_between: Vec<u64>,
    /// The holder had invoked release before the loss: it lost nothing it still believed it
    /// held.
    pub released_before: bool,
    /// One sentence for a human; `#N` is the history index N.
    pub summary: String,
}

impl Learned {
    /// Whether the holder wrote after losing and before learning.
    pub fn wrote_between(&self) -> bool {
        !self.writes_between.is_empty()
    }
}

/// Milliseconds with three decimals, signed.
pub fn ms(ns: i64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}
