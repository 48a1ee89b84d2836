//! Where a paused or crashed client stops.

use serde::Serialize;

/// Where a paused or crashed client stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PausePoint {
    /// Right after the acquire succeeded.
    AfterAcquire,
    /// After the client checked it still holds the lock, just before it writes.
    BeforeWrite,
    /// Just before the release.
    BeforeRelease,
}

impl PausePoint {
    pub const ALL: &'static [PausePoint] = &[
        PausePoint::AfterAcquire,
        PausePoint::BeforeWrite,
        PausePoint::BeforeRelease,
    ];
    pub const NAMES: &'static [&'static str] = &["after-acquire", "before-write", "before-release"];

    pub fn name(self) -> &'static str {
        match self {
            PausePoint::AfterAcquire => "after-acquire",
            PausePoint::BeforeWrite => "before-write",
            PausePoint::BeforeRelease => "before-release",
        }
    }
}
