//! The lock operations of a history, taken one event at a time for the linearizability check
//! (P-compositionality: each lock is checked on its own). Only `acquire`, `release` and
//! `renew` count. Either every operation is kept, in a compact form, for the search
//! ([`LockOps::default`], for a stream of events that cannot be read twice), or each lock is
//! checked as the history streams ([`LockOps::streaming`]) in memory for what is in flight;
//! a lock that check finds violated or cannot follow is searched from a second reading of
//! the history ([`Recheck`]), which keeps that lock's operations alone.

use super::kept_ops::{KeptOp, KeptOps, DONE, FAILED, HAS_ARG, HAS_TOKEN, NONE};
use super::lin_check::{summarize, Lock};
use super::lin_stream::model::{Lease, Mutex, Pending};
use super::lin_stream::{LockLin, Open, Outcome};
use super::params::Property;
use super::LinSummary;
use crate::history::{EventKind, EventRef, Process, F};
use crate::lin_search::{Budget, OpF};
use crate::models::mutex::Owner;
use crate::models::{lease, mutex, Model};
use crate::verdict::Verdict;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::{Duration, Instant};

fn lock_f(f: F) -> Option<OpF> {
    match f {
        F::Acquire => Some(OpF::Acquire),
        F::Release => Some(OpF::Release),
        F::Renew => Some(OpF::Renew),
        F::Write | F::Read | F::Cas | F::Notice => None,
        F::Partition
        | F::Slow
        | F::Heal
        | F::Pause
        | F::Resume
        | F::Crash
        | F::Restart
        | F::Clock
        | F::ClockReset
        | F::Failover => None,
    }
}

/// No slot: the operation is not followed by the streaming check.
const NO_SLOT: u8 = u8::MAX;

/// One lock's operations.
#[derive(Debug, Default)]
struct LockPart {
    name: String,
    /// Every operation, when kept.
    kept: KeptOps,
    /// Operations invoked, and those of them that failed.
    invoked: u64,
    failed: u64,
    /// The streaming check: the operations in flight, and the check against each model
    /// that may fit: `mutex` until the history shows a lease, `lease` once it does.
    open: Open,
    mutex: Option<LockLin<Mutex>>,
    lease: Option<LockLin<Lease>>,
    /// Some operation returned: the lock is no longer in its first state.
    returned_any: bool,
    /// Owners of acquires the streaming check left out as never needed ([`LockPart::forgo`]).
    retired: HashSet<Owner>,
    /// One of them acted again: a violation the streaming check finds may be one only
    /// without what it left out, and only the search may say so.
    inexact: bool,
}

impl LockPart {
    fn streams(&mut self) -> impl Iterator<Item = &mut dyn Follow> {
        let m = self.mutex.as_mut().map(|m| m as &mut dyn Follow);
        let l = self.lease.as_mut().map(|l| l as &mut dyn Follow);
        m.into_iter().chain(l)
    }

    /// Follows a new operation; [`NO_SLOT`] when nothing is followed any more (the `lease`
    /// check, which a lease may yet start, ended too).
    fn open_op(&mut self, p: u64, f: OpF, arg: Option<i64>, call_ns: u64) -> u8 {
        let ended = |o: Outcome| o != Outcome::Going;
        if self.mutex.as_ref().is_none_or(|m| ended(m.outcome()))
            && self.lease.as_ref().is_some_and(|l| ended(l.outcome()))
        {
            return NO_SLOT;
        }
        let owner = Owner::of(p);
        self.inexact |= owner.is_some_and(|o| self.retired.contains(&o));
        let slot = owner.and_then(|owner| self.open.add(Pending::new(owner, f, arg, call_ns)));
        match slot {
            Some(slot) => slot,
            // A process id the models cannot hold, or too much in flight: the search
            // decides (and explains).
            None => {
                self.streams().for_each(|s| s.give_up());
                self.open = Open::default();
                NO_SLOT
            }
        }
    }

    fn returned(&mut self, slot: u8, ret_ns: u64) {
        if slot == NO_SLOT {
            return;
        }
        self.returned_any = true;
        let open = std::mem::take(&mut self.open);
        self.streams().for_each(|s| s.returned(&open, slot, ret_ns));
        self.open = open;
        self.open.remove(slot);
    }

    fn fail(&mut self, slot: u8) {
        if slot == NO_SLOT {
            return;
        }
        self.streams().for_each(|s| s.failed(slot));
        self.open.remove(slot);
    }

    /// The operation in `slot` will never return; `retired` when its process was retired
    /// with it (`info`) rather than moving on to another operation.
    fn forgo(&mut self, slot: u8, retired: bool) {
        if slot == NO_SLOT {
            return;
        }
        let Some(&op) = self.open.op(slot) else {
            return;
        };
        // An acquire whose process was retired with it, with nothing else in flight, is one
        // the search leaves out once it sees the process never act again
        // ([`crate::lin_search::Spec::never_needed`]); left out here at once, or every such
        // acquire would multiply the configurations until the check gave up. Leaving out an
        // operation of unknown outcome can only lose linearizations, never make one up: if
        // the process acts again after all (a session's end stands for a release of its
        // locks), a violation found from then on is the search's to confirm (`inexact`).
        // (A renewal that went unanswered does not retire its process: a watchdog's lane
        // goes on.)
        if retired && op.f == OpF::Acquire && !self.open.owner_has_another(slot) {
            self.streams().for_each(|s| s.never_needed(slot));
            self.open.remove(slot);
            self.retired.insert(op.owner);
            return;
        }
        self.open.forgo(slot);
        let open = std::mem::take(&mut self.open);
        self.streams().for_each(|s| s.forgone(&open, slot));
        self.open = open;
    }
}

/// The streaming check of one model, whatever the model.
trait Follow {
    fn give_up(&mut self);
    fn returned(&mut self, open: &Open, slot: u8, ret_ns: u64);
    fn failed(&mut self, slot: u8);
    fn forgone(&mut self, open: &Open, slot: u8);
    fn never_needed(&mut self, slot: u8);
}

impl<M: super::lin_stream::model::StreamModel> Follow for LockLin<M> {
    fn give_up(&mut self) {
        LockLin::give_up(self);
    }
    fn returned(&mut self, open: &Open, slot: u8, ret_ns: u64) {
        LockLin::returned(self, open, slot, ret_ns);
    }
    fn failed(&mut self, slot: u8) {
        LockLin::failed(self, slot);
    }
    fn forgone(&mut self, open: &Open, slot: u8) {
        LockLin::forgone(self, open, slot);
    }
    fn never_needed(&mut self, slot: u8) {
        LockLin::never_needed(self, slot);
    }
}

/// Where an operation in flight is kept.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    lock: usize,
    /// Position in the lock's kept operations.
    at: usize,
    slot: u8,
}

/// The streaming check's own state.
#[derive(Debug)]
struct Streaming {
    /// The check against `mutex` runs until a lease shows (an exclusive lock only); the
    /// one against `lease` from then on.
    mutex: bool,
    last_index: Option<u64>,
    /// The events came out of index order: the streaming check takes events in the order
    /// they come, the search in index order, so only the search decides.
    unordered: bool,
    /// Time spent taking returns (nearly all the check's work), for the summary.
    spent: Duration,
}

/// Every lock's operations, or every lock's streaming check.
#[derive(Debug)]
pub struct LockOps {
    /// Per lock, in order of first appearance.
    locks: Vec<LockPart>,
    ids: HashMap<String, usize>,
    /// Per process and lane (renew or not): the operation in flight.
    in_flight: HashMap<(u64, bool), InFlight>,
    /// Some acquire asked for a lease, or some holder was granted one: the lock expires. A
    /// library that does not say how long a grant is good for (`lease_ms` null on the grant)
    /// still holds the lease it was asked for, and a lock checked as a mutex that never
    /// expires would call every grant after such a holder's lease ran out impossible.
    leases: bool,
    /// Keep every operation for the search.
    keep: bool,
    /// Keep only these locks' operations (a second reading).
    only: Option<BTreeSet<String>>,
    streaming: Option<Streaming>,
    /// Per process, the locks it was granted and has not asked to release: what a crash of
    /// it lets go.
    held: HashMap<u64, BTreeSet<String>>,
    /// Per process and lock, the lease its last acquire asked for: what a renewal that names
    /// no length renews for.
    lengths: lease::RenewLengths<(u64, usize)>,
}

impl Default for LockOps {
    /// Keeps every operation.
    fn default() -> Self {
        LockOps {
            locks: Vec::new(),
            ids: HashMap::new(),
            in_flight: HashMap::new(),
            leases: false,
            keep: true,
            only: None,
            streaming: None,
            held: HashMap::new(),
            lengths: lease::RenewLengths::default(),
        }
    }
}

fn to_i64(x: Option<u64>) -> Option<i64> {
    x.and_then(|x| i64::try_from(x).ok())
}

impl LockOps {
    /// Checks each lock as the history streams, under `property`, keeping only what is in
    /// flight; [`LockOps::check`] then asks for a second reading of the locks it did not
    /// decide.
    pub fn streaming(property: Property) -> Self {
        LockOps {
            keep: false,
            streaming: Some(Streaming {
                mutex: property == Property::Exclusive,
                last_index: None,
                unordered: false,
                spent: Duration::ZERO,
            }),
            ..LockOps::default()
        }
    }

    fn lock_id(&mut self, name: &str) -> usize {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.locks.len();
        let follow = self.streaming.as_ref();
        self.locks.push(LockPart {
            name: name.to_string(),
            mutex: follow.filter(|s| s.mutex).map(|_| LockLin::default()),
            lease: follow.filter(|_| self.leases).map(|_| LockLin::default()),
            ..LockPart::default()
        });
        self.ids.insert(name.to_string(), id);
        id
    }

    /// A lease showed: the `lease` model fits, not `mutex`. The `lease` check starts where
    /// no operation returned yet (invocations alone leave a lock in its first state, which
    /// spares following both models through a history that never shows a lease); a lock
    /// that is past it is left to the search.
    fn set_leases(&mut self) {
        self.leases = true;
        if let Some(s) = &mut self.streaming {
            s.mutex = false;
            for part in &mut self.locks {
                part.mutex = None;
                let mut lease = LockLin::default();
                if part.returned_any {
                    lease.give_up();
                }
                part.lease = Some(lease);
            }
        }
    }

    /// Takes the next event, in history order.
    pub fn push(&mut self, e: &EventRef<'_>) {
        if let (Process::Nemesis, F::Crash, Some(p)) = (e.process, e.f, e.value.client) {
            if e.kind == EventKind::Info {
                self.session_ended(p, e);
            }
            return;
        }
        let (Process::Client(p), Some(f)) = (e.process, lock_f(e.f)) else {
            return;
        };
        if let Some(s) = &mut self.streaming {
            s.unordered |= s.last_index.is_some_and(|l| e.index <= l);
            s.last_index = Some(e.index);
        }
        self.take(p, e);
        if e.kind == EventKind::Info {
            // An unknown outcome retires the process: its client drops the session and goes
            // on as a new process. An acquire it had in flight may have been granted.
            if f == OpF::Acquire && !self.leases {
                self.held
                    .entry(p)
                    .or_default()
                    .insert(e.lock_name().to_owned());
            }
            self.session_ended(p, e);
        }
    }

    /// Client process `p`'s session ended: it was killed (`client-crash`), or an operation of
    /// it had an unknown outcome, after which its client drops the session and goes on as a
    /// new process. A lock without a lease lives as long as its holder's session, which the
    /// server ends at some point after (a closed connection, a session timeout), and the
    /// history shows nothing of it: a release by `p` that never returns stands for it, which
    /// may take effect at any time from then on, as the server's letting go may. Without it, a
    /// `mutex` check would keep the gone holder holding and call the next grant impossible (a
    /// session lock that PostgreSQL let go when it ended an idle session, say). A lock with a
    /// lease runs out by itself (the `lease` model), so nothing is added once a lease showed.
    /// A lock that outlives its session (a key without a TTL) is the lock check's to judge:
    /// nobody else is granted it, and that is a deadlock, not a history this check refuses.
    fn session_ended(&mut self, p: u64, e: &EventRef<'_>) {
        let Some(locks) = self.held.remove(&p) else {
            return;
        };
        if self.leases {
            return;
        }
        for lock in locks {
            let mut release = EventRef {
                v: e.v,
                index: e.index,
                time_ns: e.time_ns,
                process: Process::Client(p),
                kind: EventKind::Invoke,
                f: F::Release,
                lock: Some(lock.into()),
                value: Default::default(),
                error: None,
            };
            self.take(p, &release);
            release.kind = EventKind::Info;
            self.take(p, &release);
        }
    }

    /// Takes a lock operation's event of process `p`.
    fn take(&mut self, p: u64, e: &EventRef<'_>) {
        let Some(f) = lock_f(e.f) else {
            return;
        };
        match (f, e.kind) {
            // Once a lease showed, a crash lets nothing go (see `crashed`): nothing to keep.
            (OpF::Acquire, EventKind::Ok) if !self.leases => {
                let held = self.held.entry(p).or_default();
                if !held.contains(e.lock_name()) {
                    held.insert(e.lock_name().to_owned());
                }
            }
            (OpF::Release, EventKind::Invoke) => {
                if let Some(held) = self.held.get_mut(&p) {
                    held.remove(e.lock_name());
                }
            }
            _ => {}
        }
        let lane = (p, f == OpF::Renew);
        if e.kind == EventKind::Invoke {
            let arg = match f {
                OpF::Acquire | OpF::Renew => to_i64(e.value.lease_ms),
                _ => e.value.int,
            };
            if f == OpF::Acquire && arg.is_some() && !self.leases {
                self.set_leases();
            }
            let lock = e.lock_name();
            if self.only.as_ref().is_some_and(|only| !only.contains(lock)) {
                // Not kept, but it is the lane's operation in flight now.
                self.in_flight.remove(&lane);
                return;
            }
            let id = self.lock_id(lock);
            let arg = match f {
                OpF::Acquire => {
                    self.lengths.asked((p, id), arg);
                    arg
                }
                OpF::Renew => self.lengths.renews(&(p, id), arg),
                OpF::Release
                | OpF::Write
                | OpF::Read
                | OpF::Cas
                | OpF::Get
                | OpF::Put
                | OpF::Append => arg,
            };
            let part = &mut self.locks[id];
            part.invoked += 1;
            let at = if self.keep {
                part.kept.push(KeptOp {
                    process: p,
                    call: e.index,
                    ret: NONE,
                    call_ns: e.time_ns,
                    ret_ns: NONE,
                    arg: arg.unwrap_or(0),
                    token: 0,
                    f,
                    flags: if arg.is_some() { HAS_ARG } else { 0 },
                })
            } else {
                0
            };
            let slot = if self.streaming.is_some() {
                part.open_op(p, f, arg, e.time_ns)
            } else {
                NO_SLOT
            };
            let new = InFlight { lock: id, at, slot };
            if let Some(old) = self.in_flight.insert(lane, new) {
                // The process moved on: what it had in flight never returns.
                self.locks[old.lock].forgo(old.slot, false);
            }
            return;
        }
        if f == OpF::Acquire
            && e.kind == EventKind::Ok
            && e.value.lease_ms.is_some()
            && !self.leases
        {
            self.set_leases();
        }
        let Some(InFlight { lock, at, slot }) = self.in_flight.remove(&lane) else {
            return;
        };
        let part = &mut self.locks[lock];
        match e.kind {
            EventKind::Ok => {
                if self.keep {
                    let op = part.kept.get_mut(at);
                    op.flags |= DONE;
                    if let (OpF::Acquire, Some(t)) = (f, to_i64(e.value.token)) {
                        op.flags |= HAS_TOKEN;
                        op.token = t;
                    }
                    op.ret = e.index;
                    op.ret_ns = e.time_ns;
                }
                match &mut self.streaming {
                    Some(s) if slot != NO_SLOT => {
                        let start = Instant::now();
                        part.returned(slot, e.time_ns);
                        s.spent += start.elapsed();
                    }
                    _ => part.returned(slot, e.time_ns),
                }
            }
            // Did not happen: left out.
            EventKind::Fail => {
                part.failed += 1;
                if self.keep {
                    part.kept.get_mut(at).flags |= FAILED;
                }
                part.fail(slot);
            }
            EventKind::Info => part.forgo(slot, true),
            EventKind::Invoke => part.forgo(slot, false),
        }
    }

    /// The model the lock operations are checked against under `property`, if one fits:
    /// `lease` when the lock has leases (asked for or granted), `mutex` for an exclusive lock
    /// without them.
    pub fn model(&self, property: Property) -> Option<&'static dyn Model> {
        match property {
            _ if self.leases => Some(&lease::LEASE),
            Property::Exclusive => Some(&mutex::MUTEX),
            Property::Fenced => None,
        }
    }

    /// Checks each lock's operations against [`LockOps::model`] within `budget`, one lock
    /// after another in name order; `None` when no model fits. The first lock found not
    /// linearizable ends the check (the verdict is decided). A streaming check that did not
    /// decide every lock asks for a second reading of the history: `Err` says what to keep
    /// from it ([`Recheck`]).
    pub fn check(
        mut self,
        property: Property,
        budget: &Budget,
    ) -> Result<Option<LinSummary>, Recheck> {
        let Some(model) = self.model(property) else {
            return Ok(None);
        };
        let start = Instant::now();
        self.locks.sort_by(|a, b| a.name.cmp(&b.name));
        let Some(streaming) = &self.streaming else {
            let locks = self.locks.into_iter().map(|part| {
                let kept = (part.invoked - part.failed) as usize;
                (part.name, Lock::Ops(part.kept.into_history(kept)))
            });
            return Ok(Some(summarize(model, locks, budget, start, Duration::ZERO)));
        };
        let (leases, spent) = (self.leases, streaming.spent);
        let locks: Vec<Streamed> = self
            .locks
            .into_iter()
            .map(|part| {
                let outcome = if leases {
                    part.lease.as_ref().map(|l| l.outcome())
                } else {
                    part.mutex.as_ref().map(|m| m.outcome())
                };
                let decided = !streaming.unordered && outcome == Some(Outcome::Going);
                let violated =
                    !streaming.unordered && !part.inexact && outcome == Some(Outcome::Violated);
                Streamed {
                    name: part.name,
                    ops: part.invoked - part.failed,
                    search: !decided,
                    violated,
                }
            })
            .collect();
        if locks.iter().any(|l| l.search) {
            return Err(Recheck {
                model,
                locks,
                start,
                spent,
            });
        }
        let locks = locks.into_iter().map(|l| (l.name, Lock::Streamed(l.ops)));
        Ok(Some(summarize(model, locks, budget, start, spent)))
    }
}

/// One lock as the streaming check left it.
#[derive(Debug)]
struct Streamed {
    name: String,
    /// Its operations that did not fail.
    ops: u64,
    /// The search decides it (the stream did not, or found it violated).
    search: bool,
    /// The stream found it violated, for certain.
    violated: bool,
}

/// What a streaming check left to the search: the locks to read again.
pub struct Recheck {
    model: &'static dyn Model,
    /// Every lock, in name order.
    locks: Vec<Streamed>,
    start: Instant,
    /// The streaming check's time.
    spent: Duration,
}

impl std::fmt::Debug for Recheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recheck")
            .field("model", &self.model.name())
            .field("locks", &self.locks)
            .finish()
    }
}

impl Recheck {
    /// Where to push the events of the second reading: it keeps the locks to search.
    pub fn ops(&self) -> LockOps {
        let only = (self.locks.iter())
            .filter(|l| l.search)
            .map(|l| l.name.clone());
        LockOps {
            only: Some(only.collect()),
            ..LockOps::default()
        }
    }

    /// The summary without the search: a lock the streaming check found violated is not
    /// linearizable (unexplained), else the locks it did not follow are undecided; `why` says
    /// why no search was made.
    pub fn unsearched(self, why: &str) -> LinSummary {
        let ops = self.locks.iter().map(|l| l.ops).sum();
        let violated: Vec<&str> = (self.locks.iter())
            .filter(|l| l.violated)
            .map(|l| l.name.as_str())
            .collect();
        let undecided: Vec<&str> = (self.locks.iter())
            .filter(|l| l.search && !l.violated)
            .map(|l| l.name.as_str())
            .collect();
        let (verdict, explanation, unknown_reason) = if violated.is_empty() {
            let locks = undecided.join(", ");
            let reason = format!("lock(s) {locks} not followed as the history streamed, and {why}");
            (Verdict::Unknown, None, Some(reason))
        } else {
            let locks = violated.join(", ");
            let text = format!(
                "no linearization of lock(s) {locks}' operations exists (found as the history streamed; unexplained: {why})"
            );
            (Verdict::Invalid, Some(text), None)
        };
        LinSummary {
            model: self.model.name().to_owned(),
            verdict,
            elapsed_ms: (self.start.elapsed() + self.spent).as_secs_f64() * 1000.0,
            ops,
            explanation,
            unknown_reason,
            violated_at_ns: None,
        }
    }

    /// The summary, with the locks to search taken from `again` (as [`Recheck::ops`] made
    /// it and the second reading filled it).
    pub fn finish(self, again: LockOps, budget: &Budget) -> LinSummary {
        let mut kept: HashMap<String, LockPart> = again
            .locks
            .into_iter()
            .map(|part| (part.name.clone(), part))
            .collect();
        let locks = self.locks.into_iter().map(|l| {
            let lock = if !l.search {
                Lock::Streamed(l.ops)
            } else {
                match kept.remove(&l.name) {
                    Some(part) => {
                        let n = (part.invoked - part.failed) as usize;
                        Lock::Ops(part.kept.into_history(n))
                    }
                    None => Lock::Ops(Default::default()),
                }
            };
            (l.name, lock)
        });
        summarize(self.model, locks, budget, self.start, self.spent)
    }
}
