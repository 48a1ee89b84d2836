//! Believed holding intervals, followed event by event: from a process's `acquire ok` until it
//! stops believing it holds the lock (release invoke, lost renew, retirement, crash, or the
//! end of the history). Memory: the open holdings and one entry per client process.
//!
//! A release ends a holding at its invocation (the holder gave the lock up there and writes
//! nothing more under it) unless it comes back `fail`: a release that failed did not happen,
//! so the lock is still held as far as anyone knows and the holding goes on, *kept* (see
//! [`Release::Kept`]). That is what lets a lockout show a holder whose unlock failed and who
//! keeps the others out (Redisson's MultiLock after a node crash). A release whose outcome is
//! unknown (`info`, or none) still ends the holding at its invocation, as before: it may have
//! released, the holder is retired by it and never acts again, and counting it as held longer
//! could only make double holders the history does not show.

use crate::history::{EventKind, F};
use std::collections::HashMap;

/// Why a holding interval ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EndReason {
    /// The process invoked release.
    Released,
    /// A renew failed: the process learned the lock is no longer its.
    Lost,
    /// An operation of the process ended in `info`, which retires it.
    Retired,
    /// The nemesis crashed the process.
    Crashed,
    /// The process acquired the same lock again; the new interval takes over.
    Reacquired,
    /// Nothing ended it: the process still believed it held the lock when the history
    /// ended, so the holding runs to the history's last event.
    HistoryEnd,
    /// Nothing ended it, but its lease (counted from the acquire's or the last renewal's
    /// invocation) ran out before the history ended: it stops there.
    LeaseRanOut,
    /// Kept after a failed release, it ended when another process was granted the lock: the
    /// lock's server held it free, so the holder's key was gone (expired, forgotten, or taken).
    Superseded,
}

impl EndReason {
    /// Past-tense phrase for summaries: "released at 3.000 s".
    pub fn phrase(self) -> &'static str {
        match self {
            EndReason::Released => "invoked release",
            EndReason::Lost => "learned it lost the lock",
            EndReason::Retired => "was retired (info)",
            EndReason::Crashed => "crashed",
            EndReason::Reacquired => "acquired again",
            EndReason::HistoryEnd => "still held it when the history ended",
            EndReason::LeaseRanOut => "let its lease run out",
            EndReason::Superseded => "was passed over after its release failed",
        }
    }
}

/// A write invoked while holding.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WriteRef {
    pub invoke_ns: u64,
    pub invoke_index: u64,
    pub done_index: Option<u64>,
}

/// One process believing it holds one lock, from `start_ns` to `end_ns` once it ended.
#[derive(Debug, Clone)]
pub(crate) struct Holding {
    /// Unique, in order of `acquire ok`.
    pub id: u64,
    pub process: u64,
    pub lock: u32,
    pub token: Option<u64>,
    /// Index of the `acquire ok` that began it.
    pub acquire_index: u64,
    /// When the acquire that began it was invoked: the grant happened between then and
    /// `start_ns`, so a fault over that stretch may have had a hand in it.
    pub asked_ns: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Index of the event that ended it.
    pub end_index: u64,
    pub end: EndReason,
    /// Writes the process invoked while holding.
    pub writes: Vec<WriteRef>,
    /// The lease: counted from (time, index of the acquire's or renewal's completion, time of
    /// its invocation), for how many milliseconds.
    pub lease: Option<Lease>,
    /// Where its process's release of it stands.
    pub release: Release,
    /// Whether a release of it came back `fail` (it was kept, at least for a while).
    pub kept: bool,
}

/// A holding's release, as far as it went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Release {
    /// Not asked to release.
    None,
    /// A release was invoked at (time, index) and has not come back: whatever ends the
    /// holding now, it ended there, as a release that succeeds or whose outcome stays unknown
    /// does (the holder gave the lock up at its invocation).
    Pending(u64, u64),
    /// A release invoked at (time, index) came back `fail` and no other process had been
    /// granted the lock since the holding began: the lock is still the holder's as far as
    /// anyone knows, so the holding goes on. It ends as any holding does, or at its lease's
    /// end (but not before that release's invocation, which the holder made believing it
    /// held the lock), or when another process is granted the lock (see
    /// [`EndReason::Superseded`]). Had another process been granted it already, the failure
    /// says the key was gone (`not-owner`): the holding ended at the release's invocation, as
    /// it always did, and no double holder is made of a key the history shows was not the
    /// holder's.
    Kept(u64, u64),
}

impl Holding {
    /// Until when the lock was surely not free, which a deadlock must be shown outside and a
    /// lockout's stretch runs to: the holding's end, or its lease's end counted from the
    /// grant's reply (the latest the server can have started it) if that came first. Counted
    /// from the request, as the holder must for safety, a grant that came back later than the
    /// lease after its request would be free from its start, and a holder's whole hold would
    /// count as time the lock was free while others asked (Redisson's MultiLock after a node's
    /// restart: grants 1.8 s after their request, a 1 s lease, and a STUCK of 3.1 s that took
    /// in a 0.65 s hold).
    pub fn not_free_until(&self) -> u64 {
        let end = match self.lease {
            Some(l) => self
                .end_ns
                .min((l.from_ns.max(self.start_ns)).saturating_add(l.ms.saturating_mul(1_000_000))),
            None => self.end_ns,
        };
        end.max(self.start_ns)
    }
}

/// A holder's lease, as it last knew it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lease {
    /// Invocation time of the acquire or renewal that granted it: the holder counts from there.
    pub from_ns: u64,
    /// Index of that acquire's or renewal's completion.
    pub index: u64,
    pub ms: u64,
    /// The library named it on the grant; `false`: only what lockpick asked for, which a
    /// session or watchdog the library keeps (unseen in the history) may outlast.
    pub named: bool,
}

impl Lease {
    pub(crate) fn expires_ns(&self) -> u64 {
        self.from_ns
            .saturating_add(self.ms.saturating_mul(1_000_000))
    }
}

/// What happened to holdings on one event.
#[derive(Debug)]
pub(crate) enum Change {
    Opened(Holding),
    Closed(Holding),
}

#[derive(Debug, Default)]
struct ProcessState {
    open: Vec<Holding>,
    /// The first nemesis crash of this process: (time, index).
    crash: Option<(u64, u64)>,
    /// An operation ended in `info`: nothing it does later counts.
    retired: bool,
}

/// Every process's open holdings.
#[derive(Debug, Default)]
pub(crate) struct Holdings {
    processes: HashMap<u64, ProcessState>,
    next_id: u64,
    /// Per lock, the `acquire ok` index of its latest holding: a failed release keeps a
    /// holding only if no other process was granted the lock since it began.
    last_grant: HashMap<u32, u64>,
    /// (lock, process) of holdings kept after a failed release, which another process's
    /// grant of the lock ends; entries whose holding ended otherwise are dropped lazily.
    kept: Vec<(u32, u64)>,
}

/// Whether an operation on `op_lock` concerns a holding of `held`: an operation that names no
/// lock (id 0, the empty name) concerns every lock its process holds.
fn concerns(op_lock: u32, held: u32) -> bool {
    op_lock == 0 || op_lock == held
}

fn close(
    open: &mut Vec<Holding>,
    keep: impl Fn(&Holding) -> bool,
    at: (u64, u64),
    why: EndReason,
    out: &mut Vec<Change>,
) {
    let mut i = 0;
    while i < open.len() {
        if keep(&open[i]) {
            i += 1;
        } else {
            let mut h = open.swap_remove(i);
            let (at, why) = end_of(&h, at, why);
            h.end_ns = at.0.max(h.start_ns);
            h.end_index = at.1;
            h.end = why;
            out.push(Change::Closed(h));
        }
    }
}

/// Where and why `h` ends when something would end it at `at` for `why`: at its pending
/// release's invocation if one is in flight; at its lease's end if it was kept after a failed
/// release and the lease ran out first (the key surely expired there), or at that release's
/// invocation if the lease had run out before it; else as asked.
fn end_of(h: &Holding, at: (u64, u64), why: EndReason) -> ((u64, u64), EndReason) {
    match (h.release, h.lease) {
        (Release::Pending(t, i), _) => ((t, i), EndReason::Released),
        (Release::Kept(t, i), Some(l)) if l.expires_ns() <= at.0 => {
            if l.expires_ns() <= t {
                ((t, i), EndReason::Released)
            } else {
                ((l.expires_ns(), l.index), EndReason::LeaseRanOut)
            }
        }
        _ => (at, why),
    }
}

impl Holdings {
    /// Whether `p` retired (an operation of it ended in `info`): nothing it does later counts.
    pub fn retired(&self, p: u64) -> bool {
        self.processes.get(&p).is_some_and(|s| s.retired)
    }

    /// The lease of `p`'s open holding `id`, as its holder last knew it.
    pub fn lease_of(&self, p: u64, id: u64) -> Option<Lease> {
        let s = self.processes.get(&p)?;
        s.open.iter().find(|h| h.id == id).and_then(|h| h.lease)
    }

    /// The lease of `p`'s open holding of `lock`, if it has one.
    pub fn lease_on(&self, p: u64, lock: u32) -> Option<Lease> {
        let s = self.processes.get(&p)?;
        s.open.iter().find(|h| h.lock == lock).and_then(|h| h.lease)
    }

    /// When the nemesis crashed `p`, if it did: (time, index).
    pub fn crash_of(&self, p: u64) -> Option<(u64, u64)> {
        self.processes.get(&p).and_then(|s| s.crash)
    }

    /// The nemesis crashed client `p`.
    pub fn crash(&mut self, p: u64, time_ns: u64, index: u64) {
        let s = self.processes.entry(p).or_default();
        s.crash.get_or_insert((time_ns, index));
    }

    /// `p` invoked `f` on `lock`. For a write, returns the holdings it was invoked in (id and
    /// position of the write in its list) and the earliest start among them.
    pub fn invoke(
        &mut self,
        p: u64,
        f: F,
        lock: u32,
        at: (u64, u64),
        out: &mut Vec<Change>,
    ) -> (Vec<(u64, usize)>, Option<u64>) {
        let s = self.processes.entry(p).or_default();
        if s.retired {
            return (Vec::new(), None);
        }
        if let Some(c) = s.crash.filter(|c| c.0 < at.0) {
            close(&mut s.open, |_| false, c, EndReason::Crashed, out);
        }
        match f {
            F::Release => {
                // Ended at this invocation unless the release comes back `fail`.
                for h in s.open.iter_mut().filter(|h| concerns(lock, h.lock)) {
                    h.release = Release::Pending(at.0, at.1);
                }
            }
            F::Write => {
                let named = s.open.iter().any(|h| h.lock == lock);
                let mut attached = Vec::new();
                let mut since: Option<u64> = None;
                for h in s.open.iter_mut().filter(|h| !named || h.lock == lock) {
                    attached.push((h.id, h.writes.len()));
                    h.writes.push(WriteRef {
                        invoke_ns: at.0,
                        invoke_index: at.1,
                        done_index: None,
                    });
                    since = Some(since.map_or(h.start_ns, |s| s.min(h.start_ns)));
                }
                return (attached, since);
            }
            _ => {}
        }
        (Vec::new(), None)
    }

    /// A write attached by [`Holdings::invoke`] completed at `index`.
    pub fn write_done(&mut self, p: u64, attached: &[(u64, usize)], index: u64) {
        let Some(s) = self.processes.get_mut(&p) else {
            return;
        };
        for &(id, at) in attached {
            if let Some(h) = s.open.iter_mut().find(|h| h.id == id) {
                h.writes[at].done_index = Some(index);
            }
        }
    }

    /// `p`'s `f` on `lock`, invoked at `invoke_ns`, completed with `kind`; `lease_ms` is the
    /// lease an acquire was granted, and whether the library named it (else it was asked).
    #[allow(clippy::too_many_arguments)]
    pub fn complete(
        &mut self,
        p: u64,
        f: F,
        lock: u32,
        kind: EventKind,
        token: Option<u64>,
        lease_ms: Option<(u64, bool)>,
        invoke_ns: u64,
        at: (u64, u64),
        out: &mut Vec<Change>,
    ) {
        let s = self.processes.entry(p).or_default();
        if s.retired {
            return;
        }
        match (kind, f) {
            (EventKind::Info, _) => {
                close(&mut s.open, |_| false, at, EndReason::Retired, out);
                s.retired = true;
            }
            (EventKind::Ok, F::Release) => close(
                &mut s.open,
                |h| !matches!(h.release, Release::Pending(..)),
                at,
                EndReason::Released,
                out,
            ),
            (EventKind::Fail, F::Release) => {
                let last_grant = &self.last_grant;
                let passed_over = |h: &Holding| {
                    last_grant
                        .get(&h.lock)
                        .is_some_and(|&g| g > h.acquire_index)
                };
                close(
                    &mut s.open,
                    |h| !matches!(h.release, Release::Pending(..)) || !passed_over(h),
                    at,
                    EndReason::Released,
                    out,
                );
                for h in s.open.iter_mut() {
                    if let Release::Pending(t, i) = h.release {
                        h.release = Release::Kept(t, i);
                        h.kept = true;
                        if !self.kept.contains(&(h.lock, p)) {
                            self.kept.push((h.lock, p));
                        }
                    }
                }
            }
            (EventKind::Ok, F::Acquire) => {
                self.supersede(p, lock, at, out);
                let s = self.processes.entry(p).or_default();
                close(
                    &mut s.open,
                    |h| h.lock != lock,
                    at,
                    EndReason::Reacquired,
                    out,
                );
                let h = Holding {
                    id: self.next_id,
                    process: p,
                    lock,
                    token,
                    acquire_index: at.1,
                    asked_ns: invoke_ns,
                    start_ns: at.0,
                    end_ns: at.0,
                    end_index: at.1,
                    end: EndReason::HistoryEnd,
                    writes: Vec::new(),
                    lease: lease_ms.map(|(ms, named)| Lease {
                        from_ns: invoke_ns,
                        index: at.1,
                        ms,
                        named,
                    }),
                    release: Release::None,
                    kept: false,
                };
                self.next_id += 1;
                self.last_grant.insert(lock, at.1);
                out.push(Change::Opened(h.clone()));
                s.open.push(h);
            }
            (EventKind::Ok, F::Renew) => {
                for h in s.open.iter_mut().filter(|h| concerns(lock, h.lock)) {
                    if let Some(l) = &mut h.lease {
                        l.from_ns = invoke_ns;
                        l.index = at.1;
                    }
                }
            }
            (EventKind::Fail, F::Renew) => close(
                &mut s.open,
                |h| !concerns(lock, h.lock),
                at,
                EndReason::Lost,
                out,
            ),
            _ => {}
        }
    }

    /// `p` was granted `lock` at `at`: every other process's holding of it kept after a
    /// failed release ends here (or at its process's crash, if that came first).
    fn supersede(&mut self, p: u64, lock: u32, at: (u64, u64), out: &mut Vec<Change>) {
        let mut i = 0;
        while i < self.kept.len() {
            let (l, q) = self.kept[i];
            if l != lock || q == p {
                i += 1;
                continue;
            }
            self.kept.swap_remove(i);
            let Some(s) = self.processes.get_mut(&q) else {
                continue;
            };
            let (to, why) = match s.crash.filter(|c| c.0 < at.0) {
                Some(c) => (c, EndReason::Crashed),
                None => (at, EndReason::Superseded),
            };
            close(
                &mut s.open,
                |h| h.lock != lock || !matches!(h.release, Release::Kept(..)),
                to,
                why,
                out,
            );
        }
    }

    /// The history ended at `end` (time, index of its last event): every holding still open
    /// ends at its process's crash, or there.
    pub fn finish(&mut self, end: (u64, u64), out: &mut Vec<Change>) {
        let mut processes: Vec<u64> = self.processes.keys().copied().collect();
        processes.sort_unstable();
        for p in processes {
            let s = self.processes.get_mut(&p).expect("listed");
            match s.crash {
                Some(c) => close(&mut s.open, |_| false, c, EndReason::Crashed, out),
                None => {
                    // A holder that knows its lease ran out stops believing it holds the lock.
                    for h in std::mem::take(&mut s.open) {
                        let mut one = vec![h];
                        let lease = one[0].lease.filter(|l| l.expires_ns() < end.0);
                        match lease {
                            Some(l) => close(
                                &mut one,
                                |_| false,
                                (l.expires_ns(), l.index),
                                EndReason::LeaseRanOut,
                                out,
                            ),
                            None => close(&mut one, |_| false, end, EndReason::HistoryEnd, out),
                        }
                    }
                }
            }
        }
    }
}
