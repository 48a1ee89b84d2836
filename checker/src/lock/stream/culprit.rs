//! What made a second holder possible, found as the history streams: when holder A's lock is
//! granted to B, the release or renewal that removed or overwrote A's key (one that reported
//! success for a process that no longer held the lock), else A's lease running out first.
//!
//! The rule, which the oracle ([`crate::lock::oracle`]) applies to the whole history: a
//! *stale* operation on lock L is a `release` or `renew` that names L on its invoke and comes
//! back `ok` from a process whose latest grant of L (before that completion) came before A's
//! grant, or that was never granted L: its key, if it had one, was A's key by then. Of those
//! that completed between A's grant and B's, the latest is the culprit; if none did, the first
//! to complete of those still in flight at B's grant (its request may have deleted the key
//! before B's grant was recorded, the reply coming a moment later); if none, A's lease running
//! out before B's grant; if not, an operation whose reply *crossed* A's grant: one answered
//! after A asked and before A's grant came back, from a process not granted L since the grant
//! before A's, or from that grant's holder once its key may have expired (past the lease its
//! grant reported: a holder whose release comes back within it let go for A, and is never
//! named). Its request may have reached the server after A's and deleted A's key, the two
//! replies coming back in the other order; the history cannot tell, so it is named as a
//! possibility. (Renewals are not counted in that lease: a renewing holder's release counts
//! from its grant.)
//!
//! One kind of stale operation ranks below all others of both groups: that of a process
//! holding L on a lease still running at A's grant (as the holder counts it, or from when the
//! grant's request was sent, or else from the grant's reply, as an adapter counts the
//! `lease_ms` it reports). Its key could not have expired, so unless another stale operation
//! removed it, A's grant shows that request had removed the process's own key already, its
//! reply coming late. Ranked below, not left out: stale deletes cascade (a late DEL removes a
//! key whose owner's late DEL then removes the next one).
//!
//! Memory: per open holding its latest stale operation so far, per lock the release and
//! renewal requests in flight, per (lock, process) its latest grant, and for the requests in
//! flight at a grant the explanations waiting for them (dropped as the findings are).

use super::holdings::{Holding, Lease};
use crate::history::F;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, Weak};

/// A release or renewal that reported success when its process no longer held the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StaleOp {
    pub process: u64,
    pub f: F,
    pub invoke_ns: u64,
    pub invoke_index: u64,
    pub done_ns: u64,
    pub done_index: u64,
}

/// What made a second holder possible, as the history shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Culprit {
    /// A stale release deleted the earlier holder's key, or a stale renewal overwrote it.
    Stale(StaleOp),
    /// The earlier holder's lease, counted as the holder counts it, ran out at `expired_ns`,
    /// before the later grant; `counted_from_ns`: the request it was counted from (the
    /// acquire's or last renewal's invocation), when that is what set it (not the key's own
    /// lease, counted from the grant's request or reply).
    Expired {
        expired_ns: u64,
        counted_from_ns: Option<u64>,
    },
    /// A stale release or renewal answered while the earlier holder's acquire was in flight
    /// may have removed its key: the two replies crossed.
    Crossed(StaleOp),
}

/// Where stale operations still in flight at the later grant are written as they complete
/// (once: the first to complete is the one): one whose process's key may have expired by the
/// earlier grant, and one whose key still lived ([`Rank`]). Shared, and `Send`, as a run's
/// checks are.
type Slot = Arc<[OnceLock<StaleOp>; 2]>;

/// How likely a stale operation is to have removed the earlier holder's key: `Gone` when its
/// process's own key may have expired by the earlier grant, `Lived` when it surely had not.
#[derive(Debug, Clone, Copy)]
enum Rank {
    Gone = 0,
    Lived = 1,
}

impl Rank {
    fn of(runs_until: Option<u64>, start_ns: u64) -> Rank {
        if runs_until.is_some_and(|t| t > start_ns) {
            Rank::Lived
        } else {
            Rank::Gone
        }
    }
}

/// The explanation of one (earlier, later) pair of holdings, as far as it is known.
#[derive(Debug, Clone, Default)]
pub(crate) struct Cause {
    /// The latest stale operation of each [`Rank`] completed between the two grants.
    stale: [Option<StaleOp>; 2],
    /// The first stale operation of each rank to complete of those in flight at the later
    /// grant.
    late: Option<Slot>,
    /// When the earlier holder's lease ran out, if before the later grant, and the request
    /// it was counted from when that set it.
    expired_ns: Option<(u64, Option<u64>)>,
    /// The stale operation whose reply crossed the earlier holder's grant, if one did.
    crossed: Option<StaleOp>,
}

impl Cause {
    pub fn culprit(&self) -> Option<Culprit> {
        let late = |r: Rank| {
            self.late
                .as_ref()
                .and_then(|s| s[r as usize].get().copied())
        };
        let stale = |r: Rank| self.stale[r as usize];
        let op = stale(Rank::Gone)
            .or_else(|| late(Rank::Gone))
            .or(stale(Rank::Lived))
            .or_else(|| late(Rank::Lived));
        match (op, self.expired_ns, self.crossed) {
            (Some(op), _, _) => Some(Culprit::Stale(op)),
            (None, Some((expired_ns, counted_from_ns)), _) => Some(Culprit::Expired {
                expired_ns,
                counted_from_ns,
            }),
            (None, None, Some(op)) => Some(Culprit::Crossed(op)),
            (None, None, None) => None,
        }
    }
}

/// An open holding, as the search for culprits sees it.
#[derive(Debug)]
struct Open {
    id: u64,
    process: u64,
    acquire_index: u64,
    start_ns: u64,
    /// The latest stale operation of each [`Rank`] completed since it began.
    stale: [Option<StaleOp>; 2],
    /// The stale operation whose reply crossed its grant.
    crossed: Option<StaleOp>,
}

/// An explanation waiting for a request in flight, with the earlier holding's grant (index,
/// time).
type Waiting = (Weak<[OnceLock<StaleOp>; 2]>, u64, u64);

/// A release or renewal request in flight: (process, renewal lane, invoke time, index).
type Request = (u64, bool, u64, u64);

#[derive(Debug, Default)]
pub(crate) struct Culprits {
    open: HashMap<u32, Vec<Open>>,
    /// Per (lock, process): its latest grant's index, and until when at least that grant's
    /// key lived by the grant's own account.
    last_grant: HashMap<(u32, u64), (u64, Option<u64>)>,
    requests: HashMap<u32, Vec<Request>>,
    /// Per (process, lane) in flight: the explanations waiting for it, each with the earlier
    /// holding's grant index.
    waiting: HashMap<(u64, bool), Vec<Waiting>>,
    /// Per lock: its latest grant's index, whoever had it.
    latest: HashMap<u32, u64>,
    /// Per lock: the latest operation completed since its latest grant that may have removed
    /// the next holder's key (its process not granted the lock since, or that grant's holder
    /// past its lease), a reply that may cross the next grant.
    crossing: HashMap<u32, StaleOp>,
    /// Per lock: what `crossing` held when the latest grant came, for the holding it opens.
    crossed: HashMap<u32, StaleOp>,
}

/// When a holding's key surely still lived until: its lease as the holder counts it, or as
/// its grant says (`key_until`), whichever is later.
fn runs_out(lease: Lease, key_until: Option<u64>) -> (u64, Option<u64>) {
    let by_lease = lease.expires_ns();
    match key_until {
        Some(k) if k > by_lease => (k, None),
        _ => (by_lease, Some(lease.from_ns)),
    }
}

/// Whether `f` may remove or overwrite a key.
fn touches_key(f: F) -> bool {
    matches!(f, F::Release | F::Renew)
}

impl Culprits {
    /// `p` invoked `f` on lock `lock` (0: none named) at (time, index) in lane `renew`.
    pub fn invoked(&mut self, p: u64, renew: bool, f: F, lock: u32, at: (u64, u64)) {
        if touches_key(f) && lock != 0 {
            self.requests
                .entry(lock)
                .or_default()
                .push((p, renew, at.0, at.1));
        }
    }

    /// `p`'s `f`, invoked on `lock` at `invoked` in lane `renew` (`lane` is `(p, renew)`),
    /// completed at `at`; `ok` when it succeeded and counts (its process had not retired);
    /// `lease` is that of `p`'s holding of `lock` still open then, if any.
    #[allow(clippy::too_many_arguments)]
    pub fn completed(
        &mut self,
        lane: (u64, bool),
        f: F,
        lock: u32,
        invoked: (u64, u64),
        at: (u64, u64),
        ok: bool,
        lease: Option<Lease>,
    ) {
        let (p, renew) = lane;
        let waiting = self.waiting.remove(&lane).unwrap_or_default();
        if !touches_key(f) || lock == 0 {
            return;
        }
        if let Some(r) = self.requests.get_mut(&lock) {
            r.retain(|q| (q.0, q.1) != (p, renew));
            if r.is_empty() {
                self.requests.remove(&lock);
            }
        }
        if !ok {
            return;
        }
        let op = StaleOp {
            process: p,
            f,
            invoke_ns: invoked.0,
            invoke_index: invoked.1,
            done_ns: at.0,
            done_index: at.1,
        };
        let (granted, key_until) = match self.last_grant.get(&(lock, p)) {
            Some(&(g, until)) => (Some(g), until),
            None => (None, None),
        };
        let latest = self.latest.get(&lock).copied();
        let superseded = granted.is_none_or(|g| latest.is_some_and(|l| g < l));
        let outlived =
            granted.is_some() && granted == latest && key_until.is_some_and(|t| t < at.0);
        if superseded || outlived {
            self.crossing.insert(lock, op);
        }
        // Only a holding still open has a key of its own to outlive.
        let runs_until = lease.map(|l| runs_out(l, key_until).0);
        let stale_for = |acquire_index: u64| granted.is_none_or(|g| g < acquire_index);
        for h in self.open.get_mut(&lock).into_iter().flatten() {
            if stale_for(h.acquire_index) {
                h.stale[Rank::of(runs_until, h.start_ns) as usize] = Some(op);
            }
        }
        for (slot, acquire_index, start_ns) in waiting {
            if let Some(slot) = slot.upgrade() {
                if stale_for(acquire_index) {
                    // Already set by an earlier completion: that one came first.
                    let _ = slot[Rank::of(runs_until, start_ns) as usize].set(op);
                }
            }
        }
    }

    /// `p` was granted `lock` at history index `index`; `key_until` is how long at least the
    /// grant says its key lives.
    pub fn granted(&mut self, p: u64, lock: u32, index: u64, key_until: Option<u64>) {
        self.last_grant.insert((lock, p), (index, key_until));
        self.latest.insert(lock, index);
        match self.crossing.remove(&lock) {
            Some(op) => self.crossed.insert(lock, op),
            None => self.crossed.remove(&lock),
        };
    }

    /// How long at least a grant answered at `ok_ns` says its key lives: from when its
    /// request was sent (`sent_ns`), or else from its answer, for `lease_ms`.
    pub fn key_until(ok_ns: u64, sent_ns: Option<u64>, lease_ms: Option<u64>) -> Option<u64> {
        lease_ms.map(|ms| {
            sent_ns
                .unwrap_or(ok_ns)
                .saturating_add(ms.saturating_mul(1_000_000))
        })
    }

    /// `b` opened: the cause of its grant for each open holding of another process on its
    /// lock, by that holding's id; `lease_of` gives an open holding's lease.
    pub fn opened(
        &mut self,
        b: &Holding,
        lease_of: impl Fn(u64, u64) -> Option<Lease>,
    ) -> Vec<(u64, Cause)> {
        let open = self.open.entry(b.lock).or_default();
        let mut causes = Vec::new();
        for a in open.iter().filter(|a| a.process != b.process) {
            let in_flight = self.requests.contains_key(&b.lock);
            let late = (a.stale[Rank::Gone as usize].is_none() && in_flight).then(|| {
                let slot: Slot = Arc::new([OnceLock::new(), OnceLock::new()]);
                for &(q, lane, _, _) in self.requests.get(&b.lock).into_iter().flatten() {
                    let list = self.waiting.entry((q, lane)).or_default();
                    // Explanations whose finding was dropped wait no more.
                    list.retain(|(w, _, _)| w.strong_count() > 0);
                    list.push((Arc::downgrade(&slot), a.acquire_index, a.start_ns));
                }
                slot
            });
            let key_until = self.last_grant.get(&(b.lock, a.process)).and_then(|g| g.1);
            let expired_ns = lease_of(a.process, a.id)
                .map(|l| runs_out(l, key_until))
                .filter(|&(t, _)| t < b.start_ns);
            causes.push((
                a.id,
                Cause {
                    stale: a.stale,
                    late,
                    expired_ns,
                    crossed: a.crossed,
                },
            ));
        }
        // Answered after `b` asked: its request may have reached the server after `b`'s.
        let crossed = (self.crossed.remove(&b.lock))
            .filter(|op| op.done_ns > b.asked_ns && op.process != b.process);
        open.push(Open {
            id: b.id,
            process: b.process,
            acquire_index: b.acquire_index,
            start_ns: b.start_ns,
            stale: [None, None],
            crossed,
        });
        causes
    }

    /// `h` closed: it can be no one's earlier holder any more.
    pub fn closed(&mut self, h: &Holding) {
        if let Some(open) = self.open.get_mut(&h.lock) {
            open.retain(|o| o.id != h.id);
            if open.is_empty() {
                self.open.remove(&h.lock);
            }
        }
    }
}
