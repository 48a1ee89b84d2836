//! What the report draws, derived once from a history: one lane per client process with its
//! lock holds, writes and retirement; every client operation with its latency; the writes the
//! resource accepted; the fault windows.

use lockpick_checker::faults::{FaultStream, FaultWindow};
use lockpick_checker::history::{Event, EventKind, Process, F, RUN_ENDED};
use std::collections::{HashMap, HashSet};

/// How an operation ended, for colouring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Outcome {
    Ok,
    Fail,
    /// Unknown, or never completed before the history ended.
    Info,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Fail => "fail",
            Outcome::Info => "info",
        }
    }
}

/// One client operation: its invoke and how it ended.
#[derive(Debug, Clone)]
pub struct OpView {
    pub process: u64,
    pub f: F,
    pub invoke_ns: u64,
    /// Completion time; the end of the history when it never completed.
    pub end_ns: u64,
    pub outcome: Outcome,
    pub completed: bool,
    pub invoke_index: u64,
}

impl OpView {
    pub fn latency_ms(&self) -> f64 {
        (self.end_ns - self.invoke_ns) as f64 / 1e6
    }
}

/// Why a hold bar ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HoldEnd {
    Released,
    /// A renew or the release found the lock gone.
    Lost,
    Retired,
    Crashed,
    /// The history ended while it was held.
    Open,
}

/// A process believing it holds the lock: acquire ok → release invoke (or loss, retirement,
/// crash, end of history).
#[derive(Debug, Clone)]
pub struct Hold {
    pub start_ns: u64,
    pub end_ns: u64,
    pub token: Option<u64>,
    pub end: HoldEnd,
    /// When its lease ran out at the earliest, where the acquire (or its last renew) named a
    /// lease: counted from when the request was sent (`sent_ns`), else from its invoke.
    pub lease_end_ns: Option<u64>,
    /// Where that lease was counted from: the granting request's send time, else the
    /// acquire's (or renewal's) invocation, which for an acquire that waited is well before
    /// the grant.
    pub lease_from_ns: Option<u64>,
    /// The history index of the `acquire ok` that began it.
    pub index: u64,
}

/// A write by a process, at its invoke time.
#[derive(Debug, Clone)]
pub struct LaneWrite {
    pub at_ns: u64,
    /// When it completed (the invoke time until then).
    pub end_ns: u64,
    /// The history index of its invoke.
    pub index: u64,
    /// The error it failed with, if it did.
    pub error: Option<String>,
    pub token: Option<u64>,
    pub outcome: Outcome,
    /// The fence rejected it (`fail` "stale-token").
    pub rejected: bool,
    /// The resource accepted it although it had accepted a higher token before.
    pub stale: bool,
}

/// Everything one client process did.
#[derive(Debug, Clone)]
pub struct Lane {
    pub process: u64,
    pub first_ns: u64,
    pub last_ns: u64,
    pub holds: Vec<Hold>,
    pub writes: Vec<LaneWrite>,
    /// When an operation of it ended in `info` (it retired).
    pub retired_ns: Option<u64>,
    /// When the nemesis crashed it.
    pub crashed_ns: Option<u64>,
    /// When the run ended with an operation of it in flight (`run-ended`): neither a
    /// retirement nor a crash.
    pub run_ended_ns: Option<u64>,
    /// When the lock library told it something unasked (a `notice`), and what.
    pub notices: Vec<(u64, String)>,
    pub ops: usize,
}

/// A write the resource accepted.
#[derive(Debug, Clone)]
pub struct AcceptedWrite {
    pub at_ns: u64,
    pub token: u64,
    pub process: u64,
    /// The resource had accepted a higher token before: the token went backwards.
    pub stale: bool,
    /// The highest token this write's resource (its lock's) had accepted before it.
    pub max_before: Option<u64>,
}

/// The drawable facts of a run.
#[derive(Debug, Clone)]
pub struct RunView {
    pub end_ns: u64,
    /// Ordered by process id.
    pub lanes: Vec<Lane>,
    /// In invoke order.
    pub ops: Vec<OpView>,
    /// In completion order.
    pub accepted: Vec<AcceptedWrite>,
    pub faults: Vec<FaultWindow>,
    /// Distinct lock names the client operations named.
    pub locks: usize,
}

impl RunView {
    /// Derives the view. Precondition: `events` are in history order (as read from a history).
    pub fn new(events: &[Event]) -> RunView {
        let mut b = ViewBuilder::default();
        for e in events {
            b.push(e);
        }
        b.finish()
    }
}

/// Builds a [`RunView`] one event at a time, so a report is drawn from one pass over the
/// history file without holding its events: memory is a few words per operation.
#[derive(Default)]
pub struct ViewBuilder {
    end_ns: u64,
    lanes: HashMap<u64, Lane>,
    ops: Vec<OpView>,
    /// Pending invokes per (process, f), with the token the invoke carried: a watchdog renew
    /// may overlap the holder's other operations, so pairing by process alone would mismatch.
    pending: HashMap<(u64, F), Pending>,
    holding: HashMap<u64, Hold>,
    accepted: Vec<AcceptedWrite>,
    /// Per lock: each lock protects its own resource, whose tokens are its own.
    max_accepted: HashMap<Option<String>, u64>,
    locks: HashSet<String>,
    faults: FaultStream,
}

/// What an invoke carried that its completion may not repeat.
#[derive(Clone, Copy)]
struct Pending {
    /// Position of its operation in `ops`.
    at: usize,
    token: Option<u64>,
    lease_ms: Option<u64>,
}

impl ViewBuilder {
    /// Takes the next event, in history order.
    pub fn push(&mut self, e: &Event) {
        self.end_ns = e.time_ns;
        let p = match e.process {
            Process::Client(p) => p,
            Process::Nemesis => {
                if let (F::Crash, Some(c)) = (e.f, e.value.client) {
                    let lane = lane_of(&mut self.lanes, c, e.time_ns);
                    lane.crashed_ns.get_or_insert(e.time_ns);
                    close(&mut self.holding, lane, e.time_ns, HoldEnd::Crashed);
                }
                self.faults.push(e);
                return;
            }
        };
        if let Some(lock) = &e.lock {
            if !self.locks.contains(lock) {
                self.locks.insert(lock.clone());
            }
        }
        let lane = lane_of(&mut self.lanes, p, e.time_ns);
        lane.last_ns = e.time_ns;
        // A notice is a point in time, not an operation: marked on the lane, nothing more.
        if e.f == F::Notice {
            let event = e.value.event.clone().unwrap_or_default();
            lane.notices.push((e.time_ns, event));
            return;
        }
        if e.kind == EventKind::Invoke {
            let pending = Pending {
                at: self.ops.len(),
                token: e.value.token,
                lease_ms: e.value.lease_ms,
            };
            self.pending.insert((p, e.f), pending);
            self.ops.push(OpView {
                process: p,
                f: e.f,
                invoke_ns: e.time_ns,
                // Set when it completes, or to the end of the history.
                end_ns: e.time_ns,
                outcome: Outcome::Info,
                completed: false,
                invoke_index: e.index,
            });
            lane.ops += 1;
            match e.f {
                F::Release => close(&mut self.holding, lane, e.time_ns, HoldEnd::Released),
                F::Write => lane.writes.push(LaneWrite {
                    at_ns: e.time_ns,
                    end_ns: e.time_ns,
                    index: e.index,
                    error: None,
                    token: e.value.token,
                    outcome: Outcome::Info,
                    rejected: false,
                    stale: false,
                }),
                _ => {}
            }
            return;
        }
        let Some(Pending {
            at,
            token: invoke_token,
            lease_ms,
        }) = self.pending.remove(&(p, e.f))
        else {
            return;
        };
        // The lease the grant or renew set, counted from when it was asked for: the earliest
        // it can have run out.
        // (end, counted from)
        let lease_end = |invoked: u64| {
            e.value.lease_ms.or(lease_ms).map(|ms| {
                let from = e.value.sent_ns.unwrap_or(invoked);
                (from.saturating_add(ms.saturating_mul(1_000_000)), from)
            })
        };
        let outcome = match e.kind {
            EventKind::Ok => Outcome::Ok,
            EventKind::Fail => Outcome::Fail,
            _ => Outcome::Info,
        };
        let op = &mut self.ops[at];
        op.end_ns = e.time_ns;
        op.outcome = outcome;
        op.completed = true;
        let invoked = op.invoke_ns;
        match (e.f, outcome) {
            (F::Acquire, Outcome::Ok) => {
                close(&mut self.holding, lane, e.time_ns, HoldEnd::Released);
                self.holding.insert(
                    p,
                    Hold {
                        start_ns: e.time_ns,
                        end_ns: e.time_ns,
                        token: e.value.token,
                        end: HoldEnd::Open,
                        lease_end_ns: lease_end(invoked).map(|l| l.0),
                        lease_from_ns: lease_end(invoked).map(|l| l.1),
                        index: e.index,
                    },
                );
            }
            (F::Renew, Outcome::Ok) => {
                if let (Some(h), Some((end, from))) = (self.holding.get_mut(&p), lease_end(invoked))
                {
                    if h.lease_end_ns.is_none_or(|e| end > e) {
                        h.lease_end_ns = Some(end);
                        h.lease_from_ns = Some(from);
                    }
                }
            }
            (F::Renew, Outcome::Fail) => close(&mut self.holding, lane, e.time_ns, HoldEnd::Lost),
            (F::Release, Outcome::Fail) => {
                // The bar already ended at the release invoke; mark why.
                if let Some(h) = lane.holds.last_mut() {
                    h.end = HoldEnd::Lost;
                }
            }
            (F::Write, _) => {
                let token = e.value.token.or(invoke_token);
                let mut stale = false;
                if outcome == Outcome::Ok {
                    if let Some(token) = token {
                        let seen = self.max_accepted.entry(e.lock.clone()).or_default();
                        let before = (*seen > 0).then_some(*seen);
                        let max = e.value.max_token.or(before);
                        stale = max.is_some_and(|m| token < m);
                        self.accepted.push(AcceptedWrite {
                            at_ns: e.time_ns,
                            token,
                            process: p,
                            stale,
                            max_before: max,
                        });
                        *seen = (*seen).max(token);
                    }
                }
                if let Some(w) = lane.writes.iter_mut().rev().find(|w| w.at_ns == invoked) {
                    w.outcome = outcome;
                    w.end_ns = e.time_ns;
                    w.error = e.error.clone();
                    w.rejected =
                        outcome == Outcome::Fail && e.error.as_deref() == Some("stale-token");
                    w.stale = stale;
                }
            }
            _ => {}
        }
        if outcome == Outcome::Info && e.error.as_deref() == Some(RUN_ENDED) {
            // The workload's end cut it short: the hold (if any) is open to the end.
            lane.run_ended_ns.get_or_insert(e.time_ns);
        } else if outcome == Outcome::Info {
            lane.retired_ns.get_or_insert(e.time_ns);
            close(&mut self.holding, lane, e.time_ns, HoldEnd::Retired);
        }
    }

    /// The history ended: what is still open ends with it.
    pub fn finish(mut self) -> RunView {
        let end_ns = self.end_ns;
        for op in self.ops.iter_mut().filter(|o| !o.completed) {
            op.end_ns = end_ns;
        }
        for (p, mut h) in self.holding.drain() {
            if let Some(lane) = self.lanes.get_mut(&p) {
                h.end_ns = end_ns.max(h.start_ns);
                h.end = HoldEnd::Open;
                lane.holds.push(h);
            }
        }
        let mut lanes: Vec<Lane> = self.lanes.into_values().collect();
        lanes.sort_by_key(|l| l.process);
        for lane in &mut lanes {
            lane.holds.sort_by_key(|h| h.start_ns);
        }
        RunView {
            end_ns,
            lanes,
            ops: self.ops,
            accepted: self.accepted,
            faults: self.faults.finish(end_ns),
            locks: self.locks.len(),
        }
    }
}

fn lane_of(lanes: &mut HashMap<u64, Lane>, p: u64, at_ns: u64) -> &mut Lane {
    lanes.entry(p).or_insert_with(|| Lane {
        process: p,
        first_ns: at_ns,
        last_ns: at_ns,
        holds: Vec::new(),
        writes: Vec::new(),
        retired_ns: None,
        crashed_ns: None,
        run_ended_ns: None,
        notices: Vec::new(),
        ops: 0,
    })
}

/// Ends the open hold of the lane's process, if any, at `at_ns`.
fn close(holding: &mut HashMap<u64, Hold>, lane: &mut Lane, at_ns: u64, end: HoldEnd) {
    if let Some(mut h) = holding.remove(&lane.process) {
        h.end_ns = at_ns.max(h.start_ns);
        h.end = end;
        lane.holds.push(h);
    }
}
