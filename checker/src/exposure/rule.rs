//! The exposure rules: for each kind of fault, when one instance of it opened a window in which
//! mutual exclusion could have been broken. Each fault of the harness declares its rule next to
//! its code (`FaultKind::exposure`); the rules are judged here, from the history alone.

use serde::{Deserialize, Serialize};

/// How one fault instance is judged. A rule names a *necessary* condition for a violation by
/// that fault's mechanism: a run whose every fault instance fails its rule could not have
/// shown a violation that the fault caused, and says "not exposed" instead of "valid". A rule
/// that holds does not promise a violation, only that one was possible.
///
/// Every rule needs a hold: a client granted the lock and not yet done with it (its release
/// had not come back), and another client asking for the same lock inside the window (an
/// acquire of its pending there; for the rules of a silenced holder, granted there). Without a
/// rival, nobody could be granted a second time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// A client pause: the paused client held the lock when it stopped, the pause lasted past
    /// the lease it had left (its grant's or last renewal's reply plus the lease), and another
    /// client was granted the lock from the lease's end to the end of the hold. The grant is
    /// what shows the server let the lease go: the lease's end lockpick computes is only the
    /// earliest it could (etcd revokes an expired lease up to half a second late), and while
    /// the server keeps it nobody can be a second holder. A lock without a lease counts from
    /// the pause's start.
    PauseOutlastsLease,
    /// A cut of clients from nodes (a partition of client links, a paused node): the cut left
    /// the holder fewer of the lock's granting nodes than it needs (a quorum), or held its own
    /// renewal (a client that stays on the cut node does not fail over), for longer than the
    /// lease it had left, and another client was granted the lock from the lease's end to
    /// the end of the hold (as for a pause); or the holder gave its hold up inside the cut,
    /// past its lease (its library noticed the lost session: the defence the cut tests), while
    /// another client asked. A cut also holds the requests sent across it: a grant that came
    /// back later than its lease after it was sent is judged as [`Rule::DelayPastLease`]
    /// judges one, even where the cut left a quorum (a client that waits for every node waits
    /// for the cut one, and the keys it set elsewhere may have expired by its grant). And, on a
    /// lock whose waiters hold a place a session keeps (etcd, ZooKeeper, Hazelcast's CP
    /// sessions: `LockShape::waiter_sessions`), a waiting client's acquire that the cut kept
    /// from a quorum for longer than the lease (its session could end while it waited, its
    /// keep-alives cut) and that came back after
    /// that: granted, it may hold a lock whose key is gone (etcd #11456); refused, the library
    /// noticed (its fix). No rival is needed: the waiter's own outcome is what the cut tests.
    CutPastLease,
    /// A node crash: a node that grants the lock crashed during a hold and came back (without
    /// the key, if it kept none) before the holder's lease ran out; the window runs from the
    /// restart to the lease's end or the hold's, whichever came first. A hold granted during
    /// the crash or after it, to an acquire sent before it, counts as held across it: the
    /// request may have written the node before it fell and counted its reply. Or, whatever
    /// the holds,
    /// a grant with a fencing token after the restart, following grants with tokens before the
    /// crash: a server that forgot its token counter may hand one out again (a stale write).
    RestartInsideLease,
    /// A clock jump on a node that grants the lock: forward by more than the lease the holder
    /// had left, during a hold, so the node expires the key early; the window runs from the
    /// jump to the lease's end or the hold's. A lock without a lease reads no clock.
    JumpPastLease,
    /// Latency: a grant or renewal whose request, slowed, came back later than the lease it
    /// carried after it was sent, so the lease may have run out before the holder knew it
    /// held; the window runs from the send plus the lease to the end of the hold. Or an acquire
    /// of a free lock (nobody held it when it was sent, nobody was granted it meanwhile) that
    /// took longer than the lease and was refused: the lock refused a grant that came too late,
    /// the defence this fault tests, and no rival is needed for that.
    DelayPastLease,
    /// A client crash: the crashed client held the lock, and another asked after it: only the
    /// lease (or the session) can free the lock, a liveness exposure. The window runs from the
    /// crash to the end of the run.
    HolderCrashed,
    /// A fault with no sharper rule (a failover, a clock that runs at another rate or strobes,
    /// a cut of peer links or of a member from its peers): it was in force during a hold while
    /// another client asked; the window is that overlap.
    InForceDuringContendedHold,
}

impl Rule {
    /// Every rule, in the order the docs list them.
    pub const ALL: [Rule; 7] = [
        Rule::PauseOutlastsLease,
        Rule::CutPastLease,
        Rule::RestartInsideLease,
        Rule::JumpPastLease,
        Rule::DelayPastLease,
        Rule::HolderCrashed,
        Rule::InForceDuringContendedHold,
    ];

    /// The name results and docs use.
    pub fn name(self) -> &'static str {
        match self {
            Rule::PauseOutlastsLease => "pause-outlasts-lease",
            Rule::CutPastLease => "cut-past-lease",
            Rule::RestartInsideLease => "restart-inside-lease",
            Rule::JumpPastLease => "jump-past-lease",
            Rule::DelayPastLease => "delay-past-lease",
            Rule::HolderCrashed => "holder-crashed",
            Rule::InForceDuringContendedHold => "in-force-during-contended-hold",
        }
    }

    /// The rule in one sentence, as docs/exposure.md states it (a test holds the two together).
    pub fn text(self) -> &'static str {
        match self {
            Rule::PauseOutlastsLease => {
                "the paused client held the lock, the pause outlasted the lease it had left, and another client was granted the lock before the holder was done"
            }
            Rule::CutPastLease => {
                "the cut left the holder short of a quorum of the lock's nodes, or held its own renewal, for longer than the lease it had left, and another client was granted the lock before the holder was done, or the holder gave up inside the cut while another asked; or it kept from a quorum past the lease a waiting client whose session keeps its place in the queue, and its acquire came back after"
            }
            Rule::RestartInsideLease => {
                "a node of the lock crashed during a hold (or while an acquire later granted was on its way) and restarted before the holder's lease ran out, while another client asked; or a token was granted after the restart on a lock that had granted two different tokens before the crash"
            }
            Rule::JumpPastLease => {
                "a node of the lock jumped forward by more than the lease the holder had left, while another client asked"
            }
            Rule::DelayPastLease => {
                "a grant or renewal came back later than its lease after it was sent, while another client asked; or an acquire of a free lock took longer than its lease and was refused"
            }
            Rule::HolderCrashed => {
                "the crashed client held the lock, and another client asked after the crash"
            }
            Rule::InForceDuringContendedHold => {
                "the fault was in force during a hold while another client asked"
            }
        }
    }
}
