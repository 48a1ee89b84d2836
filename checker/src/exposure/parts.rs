//! What the exposure stream keeps of a history, and what the rules judge: holds, asks, fault
//! instances and the holds each could have broken.

use super::Rule;
use crate::fault_verbs::Target;
use crate::history::F;

/// A client's hold: granted and not yet done with.
#[derive(Debug, Clone)]
pub(super) struct Hold {
    pub lock: Option<String>,
    pub granted_ns: u64,
    /// When the lease it holds began at the latest: its grant's or last renewal's reply.
    pub since_ns: u64,
    /// The lease the history records for it.
    pub lease_ms: Option<u64>,
    /// When the request that granted (or last renewed) it was sent.
    pub sent_ns: u64,
}

/// Another client's acquire that met a candidate's hold.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ask {
    pub client: u64,
    pub invoke_ns: u64,
    /// Its completion, or the run's end for one still pending.
    pub done_ns: u64,
    /// Whether it was granted.
    pub granted: bool,
}

/// A hold a fault instance could have broken, and the asks of the others while it lasted.
#[derive(Debug, Clone)]
pub(super) struct Cand {
    pub holder: u64,
    pub hold: Hold,
    /// When the hold ended (its release came back); `None`: still held at the run's end.
    pub end_ns: Option<u64>,
    /// When the holder sent its release, if it did: it gave the hold up there, though a cut
    /// may keep the answer away until the heal.
    pub release_sent_ns: Option<u64>,
    pub asks: Vec<Ask>,
    /// An acquire that took longer than the lease while the lock was free and was refused
    /// (not a hold): latency's rule counts the refusal of a grant that came too late, since
    /// refusing it is the defence the fault tested.
    pub refused: bool,
    /// A renewal of this hold, sent while a cut was in force, came back (or failed) only after
    /// the lease it had left ran out: the holder's own connection was cut, whatever quorum the
    /// cut left the others (a client that stays on its cut node does not fail over).
    pub stalled: bool,
    /// An acquire (not a hold) still waiting when a cut in force had kept it away for the
    /// lease (`hold.sent_ns` its send, `hold.since_ns` its answer): its session could end while
    /// it waited, and how it came back is what the cut tests (`Rule::CutPastLease`).
    pub waited: bool,
}

/// A pending acquire: when it was sent, its lock, and whether another client held that lock
/// when it was sent or was granted it meanwhile (then its length says nothing of latency).
#[derive(Debug, Clone)]
pub(super) struct Asking {
    pub invoke_ns: u64,
    pub lock: Option<String>,
    pub contended: bool,
}

/// One fault instance as the history shows it.
#[derive(Debug, Clone)]
pub(super) struct Instance {
    pub verb: F,
    pub target: Target,
    pub rule: Rule,
    pub start_ns: u64,
    pub end_ns: Option<u64>,
    pub nodes: Vec<String>,
    pub client: Option<u64>,
    pub offset_ms: Option<i64>,
    pub cands: Vec<Cand>,
    /// The locks on which grants had carried at least two different fencing tokens before
    /// the instance started, each with the lowest and highest. A crash that made the server
    /// forget its counter may count again from the lowest and hand out a token below the
    /// highest; with one token seen, a repeat of it is no stale write.
    pub tokens_before: Vec<TokensSeen>,
    /// The first grant with a token on one of those locks after the instance ended (a
    /// restart).
    pub token_after: Option<TokenAfter>,
}

/// The fencing tokens granted on one lock so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TokensSeen {
    pub lock: Option<String>,
    pub lowest: u64,
    pub highest: u64,
}

/// A grant with a token after a restart, on a lock of [`Instance::tokens_before`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TokenAfter {
    pub client: u64,
    pub at_ns: u64,
    /// What that lock had seen before the crash.
    pub lowest: u64,
    pub highest: u64,
}

impl Instance {
    pub(super) fn open(&self) -> bool {
        self.end_ns.is_none()
    }

    /// Whether a hold granted while this instance is in force is one of its candidates.
    pub(super) fn takes_new_holds(&self) -> bool {
        match self.rule {
            Rule::CutPastLease | Rule::DelayPastLease | Rule::InForceDuringContendedHold => true,
            Rule::PauseOutlastsLease
            | Rule::RestartInsideLease
            | Rule::JumpPastLease
            | Rule::HolderCrashed => false,
        }
    }

    /// Whether the holds in force when it starts are its candidates: all of them, those of
    /// its client, or none (latency judges the grants it slows).
    pub(super) fn takes_hold_of(&self, client: u64) -> bool {
        match self.rule {
            Rule::PauseOutlastsLease | Rule::HolderCrashed => self.client == Some(client),
            Rule::CutPastLease
            | Rule::RestartInsideLease
            | Rule::JumpPastLease
            | Rule::InForceDuringContendedHold => true,
            Rule::DelayPastLease => false,
        }
    }
}
