//! Did a run's fault reach the size the property needed? Read from the history: a fault that
//! never started, or a pause that ended before the holder's lease could run out, tested
//! nothing, and the run (a scenario, a suite case, a compared lock, a matrix cell) must say
//! "not tested", never "valid". One copy, used by every command.

use crate::history::{Event, EventKind, EventRef, Process, F};
use crate::verdict::Verdict;
use std::collections::BTreeMap;

/// What a run must show for its fault to count.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Needs {
    /// The nemesis verbs the run's faults are recorded under; each must take effect. Empty:
    /// no fault (a baseline), which needs nothing.
    pub verbs: Vec<F>,
    /// A client pause must outlast the lease its client held.
    pub outlast_lease: bool,
    /// The lease planned for the lock, used when the history's grant records none; `None`: a
    /// lock without a lease (a session lock), which a pause cannot make run out, so a pause of
    /// any length counts.
    pub planned_lease_ms: Option<u64>,
}

impl Needs {
    /// A baseline: no fault, nothing to reach.
    pub fn none() -> Needs {
        Needs::default()
    }
}

/// A client pause: when it began and ended, the lease the client's last grant had
/// (`Some(None)`: granted without a lease; `None`: the client had no grant yet), and whether
/// another client was granted that lock while it was stopped.
#[derive(Debug, Clone)]
struct Paused {
    client: u64,
    start_ns: u64,
    end_ns: Option<u64>,
    lease_ms: Option<Option<u64>>,
    /// When the lease the client held as it stopped began, at the latest (the completion of
    /// its grant or last renewal); `None` when it held none (released, or not yet granted):
    /// then only the pause's own length counts.
    held_since_ns: Option<u64>,
    /// The lock of the client's last grant.
    lock: Option<String>,
    taken_over: bool,
}

/// A client's last grant: its lease (`None`: granted without one), its lock, and, while the
/// client still holds it (no release has completed since), when its lease began at the latest.
#[derive(Debug, Clone)]
struct Grant {
    lease_ms: Option<u64>,
    lock: Option<String>,
    held_since_ns: Option<u64>,
}

/// [`fault_reach`] fed one event at a time, so a run's check reads its history once, in
/// memory that follows the clients and the pauses, not the history's length.
#[derive(Debug, Clone)]
pub struct ReachStream {
    needs: Needs,
    /// Which of `needs.verbs` took effect.
    started: Vec<bool>,
    /// Each client's last grant.
    leases: BTreeMap<u64, Grant>,
    /// Each client's last acquire event (invoke or completion): after the others' last, no
    /// one could take a lock the paused client lost.
    last_acquire_ns: BTreeMap<u64, u64>,
    pauses: Vec<Paused>,
    end_ns: u64,
}

impl ReachStream {
    pub fn new(needs: Needs) -> ReachStream {
        ReachStream {
            started: vec![false; needs.verbs.len()],
            needs,
            leases: BTreeMap::new(),
            last_acquire_ns: BTreeMap::new(),
            pauses: Vec::new(),
            end_ns: 0,
        }
    }

    /// Takes the next event, in history order.
    pub fn push(&mut self, e: &EventRef<'_>) {
        self.end_ns = e.time_ns;
        match e.process {
            Process::Client(c) => {
                if e.f == F::Acquire {
                    self.last_acquire_ns.insert(c, e.time_ns);
                    if e.kind == EventKind::Ok {
                        let lock = e.lock.as_deref();
                        for p in self.pauses.iter_mut().filter(|p| {
                            p.end_ns.is_none() && p.client != c && p.lock.as_deref() == lock
                        }) {
                            p.taken_over = true;
                        }
                        // The server granted it before this reply: the lease ends no later
                        // than the lease's length after it.
                        self.leases.insert(
                            c,
                            Grant {
                                lease_ms: e.value.lease_ms,
                                lock: lock.map(str::to_owned),
                                held_since_ns: Some(e.time_ns),
                            },
                        );
                    }
                } else if e.f == F::Renew && e.kind == EventKind::Ok {
                    if let Some(g) = self.leases.get_mut(&c) {
                        if g.held_since_ns.is_some() {
                            g.held_since_ns = Some(e.time_ns);
                            g.lease_ms = e.value.lease_ms.or(g.lease_ms);
                        }
                    }
                } else if e.f == F::Release && e.kind != EventKind::Invoke {
                    // Any answer to a release ends the hold as far as a pause can tell (an
                    // unknown one too: the lease may be gone, so only the pause's own length
                    // is held against it).
                    if let Some(g) = self.leases.get_mut(&c) {
                        g.held_since_ns = None;
                    }
                }
            }
            Process::Nemesis => {
                if e.kind == EventKind::Info && e.error.is_none() {
                    for (verb, started) in self.needs.verbs.iter().zip(&mut self.started) {
                        *started |= *verb == e.f;
                    }
                }
                let Some(client) = e.value.client else {
                    return;
                };
                if !self.needs.outlast_lease {
                    return;
                }
                if e.f == F::Pause {
                    // The lease of the grant the paused client held: its last before the pause.
                    let last = self.leases.get(&client);
                    self.pauses.push(Paused {
                        client,
                        start_ns: e.time_ns,
                        end_ns: None,
                        lease_ms: last.map(|g| g.lease_ms),
                        held_since_ns: last.and_then(|g| g.held_since_ns),
                        lock: last.and_then(|g| g.lock.clone()),
                        taken_over: false,
                    });
                } else if e.f == F::Resume {
                    if let Some(p) = self
                        .pauses
                        .iter_mut()
                        .rev()
                        .find(|p| p.client == client && p.end_ns.is_none())
                    {
                        p.end_ns = Some(e.time_ns);
                    }
                }
            }
        }
    }

    /// `Ok(what was reached)` or `Err(why the run tested nothing)`. A pause counts only up to
    /// the other clients' last acquire (the workload's end for the lock): a lease that ran out
    /// after it could be taken by no one. And a pause past a lease counts only if another
    /// client was granted that lock while the holder was stopped: until then the server had
    /// not let the lease go (etcd revokes an expired lease up to half a second late), and the
    /// stopped holder could not have been wrong.
    pub fn finish(self) -> Result<String, String> {
        if self.needs.verbs.is_empty() {
            return Ok("no fault".to_owned());
        }
        if let Some(i) = self.started.iter().position(|s| !s) {
            return Err(format!(
                "the {} fault never took effect before the run ended",
                self.needs.verbs[i].name()
            ));
        }
        let names: Vec<&str> = self.needs.verbs.iter().map(|v| v.name()).collect();
        if !self.needs.outlast_lease {
            return Ok(format!("the {} fault took effect", names.join(" and ")));
        }
        // The pause that came nearest to the lease, and one past it that nobody took over:
        // (how far past the lease's start it reached, its words).
        let mut longest: Option<(u64, String)> = None;
        let mut kept: Option<(u64, String)> = None;
        for p in &self.pauses {
            let others_end = self
                .last_acquire_ns
                .iter()
                .filter(|(c, _)| **c != p.client)
                .map(|(_, ns)| *ns)
                .max()
                .unwrap_or(0);
            let end = p.end_ns.unwrap_or(self.end_ns).min(others_end);
            let paused_ms = end.saturating_sub(p.start_ns) / 1_000_000;
            // Only a lease the server granted, as the history records it, is held to the
            // takeover: a planned one stands in for grants that record none (a lock without a
            // lease, such as redis-naive's, or an adapter that does not say), where nobody may
            // ever be granted the lock while its holder is stopped, and rightly so.
            let recorded = matches!(p.lease_ms, Some(Some(_)));
            // A holder's recorded lease began no later than its grant's (or renewal's) reply,
            // before the pause: it ran out if the holder woke more than the lease after that,
            // even when the pause alone was shorter than the whole lease. Only a recorded
            // lease: a library that renews in the background without saying so (a watchdog)
            // may have moved an unrecorded one, and only the takeover a recorded lease must
            // show proves the server let it go.
            let held_ms = p
                .held_since_ns
                .filter(|_| recorded)
                .map(|since| end.saturating_sub(since) / 1_000_000);
            let reach_ms = held_ms.unwrap_or(paused_ms).max(paused_ms);
            let lease = match p.lease_ms {
                Some(granted) => granted.or(self.needs.planned_lease_ms),
                // A client paused before its first grant held nothing a lease could protect,
                // unless the lock's lease is known from the plan.
                None => match self.needs.planned_lease_ms {
                    Some(planned) => Some(planned),
                    None => continue,
                },
            };
            let pause = match held_ms {
                Some(held) if paused_ms <= lease.unwrap_or(u64::MAX) => format!(
                    "a pause of {paused_ms} ms, ending {held} ms after its holder's lease began,"
                ),
                Some(_) | None => format!("a pause of {paused_ms} ms"),
            };
            match lease {
                Some(lease) if reach_ms <= lease => {
                    if longest.as_ref().is_none_or(|(l, _)| reach_ms > *l) {
                        let ending = held_ms.map_or(String::new(), |held| {
                            format!(", ending {held} ms after its holder's lease began,")
                        });
                        longest = Some((reach_ms, format!(
                            "the longest client pause lasted {paused_ms} ms{ending} while other clients still asked for the lock, not past the {lease} ms lease: it could not run out"
                        )));
                    }
                }
                Some(lease) if p.taken_over => {
                    return Ok(format!(
                        "{pause} outlasted the {lease} ms lease, and another client took the lock meanwhile"
                    ))
                }
                Some(lease) if !recorded => {
                    return Ok(format!("{pause} outlasted the {lease} ms lease"))
                }
                Some(lease) => {
                    if kept.as_ref().is_none_or(|(k, _)| reach_ms > *k) {
                        kept = Some((reach_ms, format!(
                            "{pause} outlasted the {lease} ms lease, but no other client was granted the lock before the holder woke: the server had not let the lease go yet"
                        )));
                    }
                }
                None => {
                    return Ok(format!(
                        "a pause of {paused_ms} ms stopped a holder of a lock without a lease"
                    ))
                }
            }
        }
        Err(match (kept, longest) {
            (Some((_, why)), _) | (None, Some((_, why))) => why,
            (None, None) => "no client was paused".to_owned(),
        })
    }
}

/// `Ok(what was reached)` or `Err(why the run tested nothing)`.
pub fn fault_reach(events: &[Event], needs: Needs) -> Result<String, String> {
    let mut stream = ReachStream::new(needs);
    for e in events {
        stream.push(&e.as_ref());
    }
    stream.finish()
}

/// A run's verdict once its fault's reach is known: a valid run whose fault tested nothing is
/// not tested; any other verdict stands (a violation or a deadlock happened, whatever the
/// fault's size).
pub fn with_reach(verdict: Verdict, reach: &Result<String, String>) -> Verdict {
    match (verdict, reach) {
        (Verdict::Valid, Err(_)) => Verdict::NotTested,
        (
            Verdict::Valid
            | Verdict::NotTested
            | Verdict::Unknown
            | Verdict::Stuck
            | Verdict::Invalid,
            _,
        ) => verdict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Value;

    fn ev(ms: u64, process: Process, kind: EventKind, f: F, value: Value) -> Event {
        Event {
            v: 1,
            index: 0,
            time_ns: ms * 1_000_000,
            process,
            kind,
            f,
            lock: None,
            value,
            error: None,
        }
    }

    fn grant(ms: u64, client: u64, lease: u64) -> Event {
        ev(
            ms,
            Process::Client(client),
            EventKind::Ok,
            F::Acquire,
            Value {
                lease_ms: Some(lease),
                ..Value::default()
            },
        )
    }

    fn pause(ms: u64, client: u64, f: F) -> Event {
        ev(
            ms,
            Process::Nemesis,
            EventKind::Info,
            f,
            Value {
                client: Some(client),
                ..Value::default()
            },
        )
    }

    fn pause_needs() -> Needs {
        Needs {
            verbs: vec![F::Pause],
            outlast_lease: true,
            planned_lease_ms: Some(1000),
        }
    }

    #[test]
    fn a_pause_shorter_than_the_recorded_lease_tested_nothing() {
        // etcd granted 1000 ms; the pause was 900 ms: the redis-gc-pause-on-etcd mistake.
        let h = vec![
            grant(100, 2, 1000),
            pause(200, 2, F::Pause),
            pause(1100, 2, F::Resume),
            grant(1200, 1, 1000),
        ];
        let why = fault_reach(&h, pause_needs()).unwrap_err();
        assert_eq!(why, "the longest client pause lasted 900 ms, ending 1000 ms after its holder's lease began, while other clients still asked for the lock, not past the 1000 ms lease: it could not run out");
        // The same pause against a 300 ms lease did test it.
        let h = vec![
            grant(100, 2, 300),
            pause(200, 2, F::Pause),
            grant(600, 1, 300),
            pause(1100, 2, F::Resume),
        ];
        assert_eq!(
            fault_reach(&h, pause_needs()).unwrap(),
            "a pause of 400 ms outlasted the 300 ms lease, and another client took the lock meanwhile"
        );
    }

    #[test]
    fn a_pause_past_the_lease_counts_only_if_another_client_took_the_lock_meanwhile() {
        // `compare redis-gc-pause --backends etcd`, seed 1: a pause of 1097 ms against etcd's
        // 1000 ms lease, and no one was granted the lock before the holder woke (etcd revokes
        // an expired lease up to half a second late): the stopped holder could not be wrong.
        let asks = |ms: u64, kind: EventKind| {
            ev(ms, Process::Client(1), kind, F::Acquire, Value::default())
        };
        let h = vec![
            grant(100, 3, 1000),
            pause(200, 3, F::Pause),
            asks(300, EventKind::Invoke),
            pause(1297, 3, F::Resume),
            grant(1400, 1, 1000),
        ];
        assert_eq!(
            fault_reach(&h, pause_needs()).unwrap_err(),
            "a pause of 1097 ms outlasted the 1000 ms lease, but no other client was granted the lock before the holder woke: the server had not let the lease go yet"
        );
        // A grant of another lock does not count either.
        let mut other = grant(1200, 1, 1000);
        other.lock = Some("other".into());
        let h = vec![
            grant(100, 3, 1000),
            pause(200, 3, F::Pause),
            asks(300, EventKind::Invoke),
            other,
            pause(1297, 3, F::Resume),
        ];
        assert!(fault_reach(&h, pause_needs()).is_err());
    }

    #[test]
    fn a_pause_counts_only_while_other_clients_still_ask_for_the_lock() {
        // `compare redis-gc-pause --backends etcd`, seed 1: the last pause (1065 ms against
        // etcd's 1000 ms lease) began 0.54 s before the workload ended. Its lease could only
        // run out when no one was left to take the lock: it tested nothing.
        let h = vec![
            grant(5400, 3, 1000),
            pause(5460, 3, F::Pause),
            ev(
                5500,
                Process::Client(1),
                EventKind::Invoke,
                F::Acquire,
                Value::default(),
            ),
            ev(
                6000,
                Process::Client(1),
                EventKind::Info,
                F::Acquire,
                Value::default(),
            ),
            pause(6525, 3, F::Resume),
            // The paused client's own acquire after it woke does not count.
            ev(
                6600,
                Process::Client(3),
                EventKind::Invoke,
                F::Acquire,
                Value::default(),
            ),
        ];
        assert_eq!(
            fault_reach(&h, pause_needs()).unwrap_err(),
            "the longest client pause lasted 540 ms, ending 600 ms after its holder's lease began, while other clients still asked for the lock, not past the 1000 ms lease: it could not run out"
        );
    }

    fn client_op(ms: u64, client: u64, kind: EventKind, f: F, lease: Option<u64>) -> Event {
        ev(
            ms,
            Process::Client(client),
            kind,
            f,
            Value {
                lease_ms: lease,
                ..Value::default()
            },
        )
    }

    #[test]
    fn a_pause_shorter_than_the_lease_counts_when_the_holder_woke_past_its_lease() {
        // Granted at 100 ms with 800 ms, held 150 ms, stopped inside its release for 720 ms:
        // it woke at 970 ms, 870 ms after the grant, and another client had the lock by then.
        let h = vec![
            grant(100, 2, 800),
            client_op(250, 2, EventKind::Invoke, F::Release, None),
            pause(250, 2, F::Pause),
            grant(920, 1, 800),
            pause(970, 2, F::Resume),
            client_op(990, 3, EventKind::Invoke, F::Acquire, None),
        ];
        assert_eq!(
            fault_reach(&h, pause_needs()).unwrap(),
            "a pause of 720 ms, ending 870 ms after its holder's lease began, outlasted the 800 ms lease, and another client took the lock meanwhile"
        );
    }

    #[test]
    fn a_renewal_moves_the_lease_start_and_a_release_ends_the_hold() {
        // Renewed at 600 ms: the 720 ms pause from 650 ms ends 770 ms after it, within the
        // 800 ms lease, although 1270 ms after the grant.
        let h = vec![
            grant(100, 2, 800),
            client_op(590, 2, EventKind::Invoke, F::Renew, None),
            client_op(600, 2, EventKind::Ok, F::Renew, Some(800)),
            pause(650, 2, F::Pause),
            client_op(1000, 1, EventKind::Invoke, F::Acquire, None),
            pause(1370, 2, F::Resume),
            client_op(1400, 1, EventKind::Invoke, F::Acquire, None),
        ];
        assert_eq!(
            fault_reach(&h, pause_needs()).unwrap_err(),
            "the longest client pause lasted 720 ms, ending 770 ms after its holder's lease began, while other clients still asked for the lock, not past the 800 ms lease: it could not run out"
        );
        // Released at 250 ms, then stopped for 720 ms: it held nothing, only the pause's
        // own length counts.
        let h = vec![
            grant(100, 2, 800),
            client_op(240, 2, EventKind::Invoke, F::Release, None),
            client_op(250, 2, EventKind::Ok, F::Release, None),
            pause(260, 2, F::Pause),
            grant(900, 1, 800),
            pause(980, 2, F::Resume),
            client_op(990, 3, EventKind::Invoke, F::Acquire, None),
        ];
        assert_eq!(
            fault_reach(&h, pause_needs()).unwrap_err(),
            "the longest client pause lasted 720 ms while other clients still asked for the lock, not past the 800 ms lease: it could not run out"
        );
    }

    #[test]
    fn a_pause_cut_by_the_end_of_the_run_counts_to_the_end_only() {
        let h = vec![
            grant(100, 0, 1000),
            pause(200, 0, F::Pause),
            grant(900, 1, 1000),
        ];
        assert!(fault_reach(&h, pause_needs()).is_err());
        let h = vec![
            grant(100, 0, 1000),
            pause(200, 0, F::Pause),
            grant(1300, 1, 1000),
        ];
        assert!(fault_reach(&h, pause_needs()).is_ok());
    }

    #[test]
    fn a_fault_that_never_took_effect_tested_nothing() {
        let mut failed = pause(300, 0, F::Partition);
        failed.error = Some("proxy refused".into());
        let h = vec![
            grant(100, 0, 1000),
            ev(
                250,
                Process::Nemesis,
                EventKind::Invoke,
                F::Partition,
                Value::default(),
            ),
            failed,
        ];
        let needs = Needs {
            verbs: vec![F::Partition],
            outlast_lease: false,
            planned_lease_ms: Some(1000),
        };
        assert_eq!(
            fault_reach(&h, needs.clone()).unwrap_err(),
            "the partition fault never took effect before the run ended"
        );
        assert!(fault_reach(&h, Needs::none()).is_ok());
        // With two faults, each must take effect.
        let mut h2 = h.clone();
        h2.push(pause(400, 0, F::Partition));
        assert_eq!(
            fault_reach(&h2, needs.clone()).unwrap(),
            "the partition fault took effect"
        );
        let both = Needs {
            verbs: vec![F::Partition, F::Crash],
            ..needs
        };
        assert_eq!(
            fault_reach(&h2, both).unwrap_err(),
            "the crash fault never took effect before the run ended"
        );
        // A lock without a lease in its grants is held to the planned one.
        let h = vec![
            ev(
                100,
                Process::Client(0),
                EventKind::Ok,
                F::Acquire,
                Value::default(),
            ),
            pause(200, 0, F::Pause),
            grant(1400, 1, 1000),
            pause(1500, 0, F::Resume),
        ];
        assert!(fault_reach(&h, pause_needs()).is_ok());
    }

    #[test]
    fn only_a_valid_run_becomes_not_tested() {
        let short: Result<String, String> = Err("too short".into());
        let reached: Result<String, String> = Ok("reached".into());
        assert_eq!(with_reach(Verdict::Valid, &short), Verdict::NotTested);
        assert_eq!(with_reach(Verdict::Valid, &reached), Verdict::Valid);
        for v in [Verdict::Invalid, Verdict::Stuck, Verdict::Unknown] {
            assert_eq!(with_reach(v, &short), v);
        }
    }

    #[test]
    fn a_planned_lease_stands_in_without_the_takeover_rule() {
        // redis-naive in the matrix: its grants record no lease, the row plans 1000 ms, and
        // nobody can take the lock while the holder is stopped (it never expires): the pause
        // of two leases tested it, and the others rightly waited.
        let h = vec![
            ev(
                100,
                Process::Client(0),
                EventKind::Ok,
                F::Acquire,
                Value::default(),
            ),
            pause(200, 0, F::Pause),
            ev(
                300,
                Process::Client(1),
                EventKind::Invoke,
                F::Acquire,
                Value::default(),
            ),
            pause(2200, 0, F::Resume),
            grant(2300, 1, 1000),
        ];
        assert_eq!(
            fault_reach(&h, pause_needs()).unwrap(),
            "a pause of 2000 ms outlasted the 1000 ms lease"
        );
    }

    #[test]
    fn a_pause_of_a_lock_without_a_lease_counts_at_any_length() {
        // A session lock (PostgreSQL's advisory lock) has no lease to run out: its grants
        // record none and none is planned.
        let h = vec![
            ev(
                100,
                Process::Client(0),
                EventKind::Ok,
                F::Acquire,
                Value::default(),
            ),
            pause(200, 0, F::Pause),
            pause(300, 0, F::Resume),
            grant(400, 1, 1000),
        ];
        let needs = Needs {
            planned_lease_ms: None,
            ..pause_needs()
        };
        assert_eq!(
            fault_reach(&h, needs).unwrap(),
            "a pause of 100 ms stopped a holder of a lock without a lease"
        );
    }
}
