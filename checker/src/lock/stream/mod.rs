//! The lock checker in one pass over the history: each event updates the open operations, the
//! believed holdings and each check's small state, so memory follows the operations in flight
//! and the live holders, not the history's length. Findings are described at the end, when the
//! fault windows are known. Every check is keyed by lock name. Deadlocks (a free lock nobody
//! got) and lockouts (a lock only one process got or held) share one module's view of who
//! wanted which lock when ([`deadlock`], [`lockout`]).

pub(crate) mod counter;
pub(crate) mod culprit;
pub(crate) mod deadlock;
pub(crate) mod describe;
pub(crate) mod double_sentence;
pub(crate) mod holdings;
pub(crate) mod lockout;
mod notice_loss;
mod overlap;
pub(crate) mod stale;
mod top;

#[cfg(test)]
pub(crate) use holdings::EndReason;

use super::params::LockCheckParams;
use super::report::{
    judge, Capped, Finding, Found, LockCounts, LockReport, LockStats, MAX_LISTED, STALE_TOKEN,
};
use super::server_view::double::Holder;
use super::server_view::{self, ServerInputs};
use crate::faults::{FaultStream, FaultWindow};
use crate::history::{EventKind, EventRef, Process, F};
use crate::server_record::ServerEvent;
use counter::{Counter, FinalRead};
use culprit::Culprits;
use deadlock::Deadlocks;
use holdings::{Change, Holding, Holdings};
use notice_loss::Notices;
use overlap::{Overlaps, Pair};
use stale::{Proof, StaleWrites, Write};
use std::collections::{HashMap, HashSet};
use top::Top;

/// An operation in flight.
#[derive(Debug)]
struct InFlight {
    f: F,
    lock: u32,
    invoke_ns: u64,
    invoke_index: u64,
    token: Option<u64>,
    int: Option<i64>,
    is_final: bool,
    /// A write: the holdings it was invoked in, and the earliest start among them.
    attached: Vec<(u64, usize)>,
    since: Option<u64>,
    /// A write: the highest accepted write of its resource when it was invoked.
    seen: Option<Write>,
    /// An acquire: since when its process wanted the lock.
    wanting_since: u64,
    /// The lease asked for.
    lease_ms: Option<u64>,
}

/// Lock names, numbered; 0 is the empty name (an operation that names no lock). Each has
/// its counts.
#[derive(Debug)]
struct Names {
    ids: HashMap<String, u32>,
    names: Vec<String>,
    counts: Vec<LockCounts>,
}

impl Names {
    fn new() -> Self {
        Names {
            ids: HashMap::from([(String::new(), 0)]),
            names: vec![String::new()],
            counts: vec![LockCounts::default()],
        }
    }

    fn id(&mut self, name: Option<&str>) -> u32 {
        let name = name.unwrap_or("");
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.ids.insert(name.to_string(), id);
        self.names.push(name.to_string());
        self.counts.push(LockCounts {
            lock: name.to_string(),
            ..LockCounts::default()
        });
        id
    }

    /// The counts of every named lock (operations that name none are not a lock's).
    fn per_lock(&mut self) -> Vec<LockCounts> {
        std::mem::take(&mut self.counts)
            .into_iter()
            .skip(1)
            .collect()
    }
}

/// Key of a double-holder finding: its place in the report (lock, later holding, earlier).
type DoubleKey = (String, u64, u64, u64, u64);

/// The lock checker, fed one event at a time in history order (see [`LockStream::push`]).
pub struct LockStream {
    params: LockCheckParams,
    names: Names,
    in_flight: HashMap<(u64, bool), InFlight>,
    holdings: Holdings,
    overlaps: Overlaps,
    stale: StaleWrites,
    counter: Counter,
    deadlocks: Option<Deadlocks>,
    faults: FaultStream,
    stats: LockStats,
    processes: HashSet<u64>,
    end_ns: u64,
    end_index: u64,
    doubles: Top<DoubleKey, Pair>,
    accepted: Top<u64, (u32, Write, u64, Proof)>,
    rejected: Top<u64, (u32, Write, Option<u64>)>,
    changes: Vec<Change>,
    notices: Notices,
    culprits: Culprits,
    /// The server's record of the locks and what of the history it is set beside, when the
    /// run has one.
    server: Option<(Vec<ServerEvent>, ServerInputs)>,
}

impl LockStream {
    /// The checker, with the server's own record of the locks (`server.jsonl`, in its order)
    /// to set beside the holders' beliefs at the end ([`crate::lock::ServerView`]). Memory then
    /// grows with the history's acquires, renewals, holdings and notices too.
    pub fn with_server_record(params: &LockCheckParams, server: Vec<ServerEvent>) -> Self {
        LockStream {
            server: Some((server, ServerInputs::default())),
            ..LockStream::new(params)
        }
    }

    pub fn new(params: &LockCheckParams) -> Self {
        LockStream {
            params: *params,
            names: Names::new(),
            in_flight: HashMap::new(),
            holdings: Holdings::default(),
            overlaps: Overlaps::default(),
            stale: StaleWrites::default(),
            counter: Counter::default(),
            deadlocks: (params.deadlock_ms > 0)
                .then(|| Deadlocks::new(params.deadlock_ms.saturating_mul(1_000_000))),
            faults: FaultStream::default(),
            stats: LockStats::default(),
            processes: HashSet::new(),
            end_ns: 0,
            end_index: 0,
            doubles: Top::new(MAX_LISTED),
            accepted: Top::new(MAX_LISTED),
            rejected: Top::new(MAX_LISTED),
            changes: Vec::new(),
            notices: Notices::default(),
            culprits: Culprits::default(),
            server: None,
        }
    }

    /// Takes the next event. Precondition: events come in history order, as
    /// [`HistoryReader`](crate::history::HistoryReader) gives them; a completion with no
    /// operation in flight is ignored.
    pub fn push(&mut self, e: &EventRef<'_>) {
        self.end_ns = e.time_ns;
        self.end_index = e.index;
        let p = match e.process {
            Process::Client(p) => p,
            Process::Nemesis => {
                if e.f == F::Crash {
                    if let Some(c) = e.value.client {
                        self.holdings.crash(c, e.time_ns, e.index);
                    }
                }
                self.faults.push(&e.to_owned());
                return;
            }
        };
        let at = (e.time_ns, e.index);
        if e.f == F::Notice {
            // A point in time the library chose, not an operation: it neither completes what
            // is in flight nor retires the process.
            let event = e.value.event.as_deref().unwrap_or("");
            self.notices
                .notice(p, event, e.value.token, e.value.note.as_deref(), at);
            if let Some((_, s)) = &mut self.server {
                s.notice(p, event, at);
            }
            return;
        }
        let lane = (p, e.f == F::Renew);
        if e.kind == EventKind::Invoke {
            match e.f {
                F::Write => self.notices.wrote(p, at),
                F::Release => self.notices.released(p, e.time_ns),
                _ => {}
            }
            self.processes.insert(p);
            let lock = self.names.id(e.lock.as_deref());
            self.culprits.invoked(p, lane.1, e.f, lock, at);
            if let Some((_, s)) = &mut self.server {
                s.invoked(p, e.f, lock, at, e.value.holder.as_deref());
            }
            let (attached, since) = self.holdings.invoke(p, e.f, lock, at, &mut self.changes);
            self.apply_changes();
            let mut wanting_since = e.time_ns;
            if let Some(d) = &mut self.deadlocks {
                if e.f == F::Acquire {
                    wanting_since = d.asked(p, lock, e.time_ns);
                } else {
                    d.moved_on(p);
                }
            }
            if e.f == F::Write && e.value.int.is_some() {
                self.counter.writes += 1;
            }
            let op = InFlight {
                f: e.f,
                lock,
                invoke_ns: e.time_ns,
                invoke_index: e.index,
                token: e.value.token,
                int: e.value.int,
                is_final: e.value.note.as_deref() == Some("final"),
                attached,
                since,
                seen: (e.f == F::Write)
                    .then(|| self.stale.at_invoke(lock))
                    .flatten(),
                wanting_since,
                lease_ms: e.value.lease_ms,
            };
            self.in_flight.insert(lane, op);
            return;
        }
        let Some(mut op) = self.in_flight.remove(&lane) else {
            return;
        };
        let invoked_on = op.lock;
        if op.lock == 0 && e.lock.is_some() {
            op.lock = self.names.id(e.lock.as_deref());
        }
        if let Some((_, s)) = &mut self.server {
            let names = [e.value.holder.as_deref(), e.value.owner.as_deref()];
            s.completed(p, lane.1, op.lock, e.kind, at, names);
        }
        let counts = e.kind == EventKind::Ok && !self.holdings.retired(p);
        let invoked = (op.invoke_ns, op.invoke_index);
        let lease = self.holdings.lease_on(p, invoked_on);
        self.culprits
            .completed(lane, op.f, invoked_on, invoked, at, counts, lease);
        if counts && op.f == F::Acquire {
            let until = Culprits::key_until(e.time_ns, e.value.sent_ns, e.value.lease_ms);
            self.culprits.granted(p, op.lock, e.index, until);
        }
        self.count(op.f, Some(e.kind), e.error.as_deref());
        self.names.counts[op.lock as usize].count(op.f, Some(e.kind));
        if op.f == F::Write {
            self.holdings.write_done(p, &op.attached, e.index);
            self.write_done(p, &op, e);
        }
        if op.f == F::Read && e.kind == EventKind::Ok {
            let is_final = op.is_final || e.value.note.as_deref() == Some("final");
            if let (true, Some(value)) = (is_final, e.value.int) {
                self.counter.final_read(FinalRead {
                    invoke_index: op.invoke_index,
                    done_index: e.index,
                    done_ns: e.time_ns,
                    value,
                });
            }
        }
        self.holdings.complete(
            p,
            op.f,
            op.lock,
            e.kind,
            e.value.token,
            (e.value.lease_ms.map(|ms| (ms, true))).or(op.lease_ms.map(|ms| (ms, false))),
            op.invoke_ns,
            at,
            &mut self.changes,
        );
        self.apply_changes();
        if e.kind == EventKind::Ok {
            let invoke = (op.invoke_ns, op.invoke_index);
            match op.f {
                F::Acquire => {
                    self.notices
                        .granted(p, op.lock, e.value.token, e.value.lease_ms, invoke, at)
                }
                F::Renew => self.notices.renewed(p, e.value.lease_ms, invoke),
                _ => {}
            }
        }
        if let (Some(d), F::Acquire) = (&mut self.deadlocks, op.f) {
            match e.kind {
                EventKind::Fail => d.failed(p, op.lock, op.wanting_since, at),
                kind => {
                    d.ended(p, op.lock, op.wanting_since, e.time_ns);
                    if kind == EventKind::Ok {
                        d.granted(op.lock, (e.time_ns, e.index, p, e.value.token));
                    }
                }
            }
        }
    }

    fn write_done(&mut self, p: u64, op: &InFlight, e: &EventRef<'_>) {
        let token = e.value.token.or(op.token);
        let w = Write {
            process: p,
            token: token.unwrap_or(0),
            invoke_ns: op.invoke_ns,
            invoke_index: op.invoke_index,
            done_ns: e.time_ns,
            done_index: e.index,
        };
        if let Some(int) = op.int {
            match e.kind {
                EventKind::Ok => self.counter.acked(int, w),
                EventKind::Fail => self.counter.failed += 1,
                EventKind::Info | EventKind::Invoke => {}
            }
        }
        if token.is_none() {
            return;
        }
        match e.kind {
            EventKind::Ok => {
                if let Some(proof) = self.stale.accepted(op.lock, w, op.seen, e.value.max_token) {
                    self.names.counts[op.lock as usize].stale_writes += 1;
                    let since = op.since.unwrap_or(op.invoke_ns);
                    self.accepted
                        .push(op.invoke_index, (op.lock, w, since, proof));
                }
            }
            EventKind::Fail if e.error.as_deref() == Some(STALE_TOKEN) => {
                self.rejected
                    .push(op.invoke_index, (op.lock, w, e.value.max_token));
            }
            _ => {}
        }
    }

    fn count(&mut self, f: F, outcome: Option<EventKind>, error: Option<&str>) {
        self.stats.count(f, outcome, error);
    }

    fn apply_changes(&mut self) {
        for c in std::mem::take(&mut self.changes) {
            match c {
                Change::Opened(h) => {
                    if let Some(d) = &mut self.deadlocks {
                        d.opened(h.lock, h.process, (h.start_ns, h.acquire_index));
                    }
                    let holdings = &self.holdings;
                    let causes = self.culprits.opened(&h, |p, id| holdings.lease_of(p, id));
                    self.overlaps.opened(&h, causes)
                }
                Change::Closed(h) => self.closed(h),
            }
        }
    }

    fn closed(&mut self, h: Holding) {
        self.stats.holding_intervals += 1;
        self.culprits.closed(&h);
        if let Some((_, s)) = &mut self.server {
            s.holding(&h);
        }
        if let Some(d) = &mut self.deadlocks {
            d.closed(
                h.lock,
                h.process,
                h.acquire_index,
                (h.start_ns, h.not_free_until()),
                (h.end_ns, h.end_index, h.end),
                h.kept,
            );
        }
        let names = &self.names.names;
        let counts = &mut self.names.counts;
        let doubles = &mut self.doubles;
        self.overlaps.closed(h, &mut |p: Pair| {
            let (a, b) = (&p.earlier, &p.later);
            counts[a.lock as usize].double_holders += 1;
            let key = (
                names[a.lock as usize].clone(),
                b.start_ns,
                b.acquire_index,
                a.start_ns,
                a.acquire_index,
            );
            doubles.push(key, p);
        });
    }

    /// The history ended: settles what is still open and judges the findings against the
    /// claimed property.
    pub fn finish(mut self) -> LockReport {
        let mut open: Vec<((u64, bool), InFlight)> = self.in_flight.drain().collect();
        open.sort_by_key(|(k, _)| *k);
        for ((p, _), op) in open {
            self.count(op.f, None, None);
            self.names.counts[op.lock as usize].count(op.f, None);
            if let (Some(d), F::Acquire) = (&mut self.deadlocks, op.f) {
                let stop = self.holdings.crash_of(p).map_or(self.end_ns, |c| c.0);
                d.ended(p, op.lock, op.wanting_since, stop.max(op.wanting_since));
            }
        }
        self.holdings
            .finish((self.end_ns, self.end_index), &mut self.changes);
        self.apply_changes();
        let faults = std::mem::take(&mut self.faults).finish(self.end_ns);
        self.stats.max_concurrent_holders = self.overlaps.max_concurrent;
        self.stats.processes = self.processes.len() as u64;
        self.report(&faults)
    }

    fn report(mut self, faults: &[FaultWindow]) -> LockReport {
        let learned = std::mem::take(&mut self.notices).finish(&self.names.names);
        let mut per_lock = self.names.per_lock();
        let names = &self.names.names;
        let mut unknowns = Vec::new();
        // Observations whatever the property: the fence at work.
        let mut others = vec![Capped {
            omitted: self.rejected.omitted,
            listed: self
                .rejected
                .into_sorted()
                .into_iter()
                .map(|(lock, w, max)| describe::rejected(&names[lock as usize], &w, max, faults))
                .collect(),
        }];
        if self.counter.writes > 0 {
            if self.counter.final_read.is_none() {
                unknowns.push(
                    "the counter has no final read, so lost updates cannot be counted".to_string(),
                );
            } else {
                let c = &self.counter;
                let unsure = (c.writes - c.acked - c.failed) as i64;
                others.push(Capped::of(describe::counter(c, unsure)));
            }
        }
        if let Some(d) = self.deadlocks {
            let threshold = d.threshold_ns();
            let finished = d.finish();
            let faulty = faulty(faults);
            let (deadlocks, lockouts) =
                liveness(finished, &faulty, threshold, names, &mut per_lock, faults);
            others.push(Capped::of(deadlocks));
            others.push(Capped::of(lockouts));
        }
        // The server's record beside the beliefs: its observations come last.
        let server = self.server.take().map(|(events, inputs)| {
            let judged = server_view::judge(&events, &inputs, names, faults);
            others.push(Capped::of(judged.losses));
            others.push(Capped::of(judged.retakes));
            judged.view
        });
        let found = Found {
            doubles: Capped {
                omitted: self.doubles.omitted,
                listed: self
                    .doubles
                    .into_sorted()
                    .iter()
                    .map(|p| {
                        let (a, b) = (&p.earlier, &p.later);
                        let culprit = p.cause.culprit();
                        let lock = &names[a.lock as usize];
                        let mut f = double_sentence::double(lock, a, b, culprit, faults);
                        // The server's record of the earlier holder's value, if the run has one.
                        if let Some((said, lines)) = (server.as_ref()).and_then(|v| {
                            let earlier = Holder {
                                process: a.process,
                                at_ns: a.asked_ns,
                            };
                            let later = Holder {
                                process: b.process,
                                at_ns: b.start_ns,
                            };
                            server_view::double::clause(v, lock, earlier, later)
                        }) {
                            f.summary.push_str("; ");
                            f.summary.push_str(&said);
                            f.server_indices = lines;
                        }
                        f
                    })
                    .collect(),
            },
            accepted: Capped {
                omitted: self.accepted.omitted,
                listed: self
                    .accepted
                    .into_sorted()
                    .into_iter()
                    .map(|(lock, w, since, proof)| {
                        describe::stale(&names[lock as usize], &w, since, proof, faults)
                    })
                    .collect(),
            },
            others,
            unknowns,
            stats: self.stats,
            per_lock,
            learned,
            server,
        };
        judge(self.params.property, found)
    }
}

/// The deadlocks and the lockouts the pass found, each ordered by lock name and start, with
/// each lock's counts.
fn liveness(
    finished: deadlock::Finished,
    faulty: &[(u64, u64)],
    threshold: u64,
    names: &[String],
    per_lock: &mut [LockCounts],
    faults: &[FaultWindow],
) -> (Vec<Finding>, Vec<Finding>) {
    let mut deadlocks: Vec<(&str, u64, Finding)> = Vec::new();
    for (lock, segments) in finished.segments {
        let name = names[lock as usize].as_str();
        for mut seg in segments {
            for (a, b) in seg.deadlocks(faulty, threshold) {
                if let Some(c) = (lock as usize).checked_sub(1) {
                    per_lock[c].deadlocks += 1;
                }
                deadlocks.push((name, a, describe::deadlock(name, &seg, a, b, faults)));
            }
        }
    }
    let mut lockouts: Vec<(&str, u64, Finding)> = Vec::new();
    for (lock, stretches) in finished.stretches {
        let name = names[lock as usize].as_str();
        for st in stretches {
            for (a, b) in lockout::pieces(&st, faulty, threshold) {
                if let Some(c) = (lock as usize).checked_sub(1) {
                    per_lock[c].lockouts += 1;
                }
                lockouts.push((name, a, describe::lockout(name, &st, a, b, faults)));
            }
        }
    }
    let order = |mut v: Vec<(&str, u64, Finding)>| {
        v.sort_by(|x, y| (x.0, x.1).cmp(&(y.0, y.1)));
        v.into_iter().map(|f| f.2).collect::<Vec<Finding>>()
    };
    (order(deadlocks), order(lockouts))
}

/// The stretches in which some fault was in force, merged (a client crash is an instant, not a
/// stretch).
pub(crate) fn faulty(faults: &[FaultWindow]) -> Vec<(u64, u64)> {
    let mut stretches: Vec<(u64, u64)> = faults
        .iter()
        .filter(|w| !w.is_instant())
        .map(|w| (w.start_ns, w.end_ns))
        .collect();
    merge(&mut stretches)
}

/// Sorts and merges intervals that overlap or touch.
pub(crate) fn merge(intervals: &mut [(u64, u64)]) -> Vec<(u64, u64)> {
    intervals.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for &(s, e) in intervals.iter() {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// `[a, b]` minus the merged, sorted intervals `holes`.
pub(crate) fn subtract(a: u64, b: u64, holes: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut from = a;
    let first = holes.partition_point(|h| h.1 < a);
    for &(hs, he) in &holes[first..] {
        if hs > b {
            break;
        }
        if hs > from {
            out.push((from, hs));
        }
        from = from.max(he);
    }
    if from < b {
        out.push((from, b));
    }
    out
}
