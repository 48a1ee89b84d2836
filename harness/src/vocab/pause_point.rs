//! Where a paused or crashed client stops, and which requests a pause inside one may stop.

use lockpick_checker::history::F;
use serde::Serialize;

/// Where a paused or crashed client stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PausePoint {
    /// Right after the acquire succeeded.
    AfterAcquire,
    /// After the client checked it still holds the lock (when its discipline is careful),
    /// just before it writes.
    BeforeWrite,
    /// Just before the release.
    BeforeRelease,
    /// Inside a request to an adapter process, at a seeded moment after the request was sent
    /// and before its reply was read: the library may be between two of its round trips.
    DuringOp,
}

impl PausePoint {
    pub const ALL: &'static [PausePoint] = &[
        PausePoint::AfterAcquire,
        PausePoint::BeforeWrite,
        PausePoint::BeforeRelease,
        PausePoint::DuringOp,
    ];
    pub const NAMES: &'static [&'static str] = &[
        "after-acquire",
        "before-write",
        "before-release",
        "during-op",
    ];

    pub fn name(self) -> &'static str {
        match self {
            PausePoint::AfterAcquire => "after-acquire",
            PausePoint::BeforeWrite => "before-write",
            PausePoint::BeforeRelease => "before-release",
            PausePoint::DuringOp => "during-op",
        }
    }
}

/// The requests a `during-op` pause may fall in (a scenario's `ops`), as a set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestOps {
    pub acquire: bool,
    pub release: bool,
    pub renew: bool,
}

impl RequestOps {
    /// Every request an adapter answers: the default.
    pub const ALL: RequestOps = RequestOps {
        acquire: true,
        release: true,
        renew: true,
    };
    pub const NAMES: &'static [&'static str] = &["acquire", "release", "renew"];

    /// The set of `names`, or the first name that is not a request.
    pub fn from_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<RequestOps, &'a str> {
        let mut ops = RequestOps {
            acquire: false,
            release: false,
            renew: false,
        };
        for name in names {
            match name {
                "acquire" => ops.acquire = true,
                "release" => ops.release = true,
                "renew" => ops.renew = true,
                other => return Err(other),
            }
        }
        Ok(ops)
    }

    /// Whether a request of verb `f` is in the set.
    pub fn contains(self, f: F) -> bool {
        match f {
            F::Acquire => self.acquire,
            F::Release => self.release,
            F::Renew => self.renew,
            F::Write
            | F::Read
            | F::Cas
            | F::Notice
            | F::Partition
            | F::Slow
            | F::Heal
            | F::Pause
            | F::Resume
            | F::Crash
            | F::Restart
            | F::Clock
            | F::ClockReset
            | F::Failover => false,
        }
    }

    /// The names in the set, in protocol order.
    pub fn names(self) -> Vec<&'static str> {
        [
            (self.acquire, "acquire"),
            (self.release, "release"),
            (self.renew, "renew"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect()
    }

    pub fn is_empty(self) -> bool {
        !(self.acquire || self.release || self.renew)
    }
}
