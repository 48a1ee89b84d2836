//! What a run of the search found, in the words the search acts on: nothing, a liveness
//! problem (not a find), a holder that went on past its lease (Kleppmann's case: what every
//! lease lock without a fencing token has), a clock that moved under a lease, or a bug of the
//! lock itself. Pure: it reads the checker's results and the history's events.
//!
//! The rule for a double holder (`a` holding first, `b` from `t`): with a correct lease lock
//! and no clock fault, every lease `a` was granted in that holding, counted from the
//! invocation of the acquire or renewal that granted it, ends by `t`; the server counts the
//! same lease from a later instant, so it cannot free the lock earlier. A lease of `a` that
//! still ran at `t` is the lock granting what it must not (unless a clock moved or a node
//! crashed before, which the class names), and a renewal of `a` asked for after `b`'s grant
//! that succeeded is a bug whatever happened: `b`'s grant proved the lock was not `a`'s.
//! Otherwise `a` only believed it held the lock after its lease ran out (a pause, a slow
//! reply): only a fencing token protects against that.
//!
//! Who holds "first" is read from the replies, and the server may have granted in the other
//! order: `b`'s grant happened somewhere between its request and its reply. A `b` stopped
//! inside its acquire may have been granted long before `a`, its lease run out while it stood
//! still, and `a` granted after: its late reply is Kleppmann's case, not the lock's. So a bug
//! needs also that `b` was granted after `a`'s reply, or, if it may have been granted before,
//! that `a` was granted inside `b`'s lease.
//!
//! Counting from the invocation is the bound that needs nothing of the lock, and it is too
//! short for an acquire that waited: a client that polled for a second before it won holds a
//! lease that began near its reply, not its request. A built-in recipe where one request
//! decides the grant knows when it sent it, and the history says (`sent_ns`): its lease, and
//! the earliest its grant can have happened, count from there. When the reply says the lease the
//! library holds (an adapter's `lease_ms`, counted from its reply: the library's own claim;
//! [`LeaseFrom::Reply`]) and the holder was not stopped between its request and the reply,
//! the lease also runs until the reply less [`REPLY_SLACK_MS`] plus that claim. A correct library's claim ends no later than the
//! server's expiry (it counts from before the server set the key), so a grant to another
//! inside it is the lock's doing: the GET-then-DEL release that deletes the key of a holder
//! who had waited for it is a bug of the lock, not Kleppmann's case.

use crate::client::kind::LeaseFrom;
use lockpick_checker::faults::{fault_windows, FaultWindow};
use lockpick_checker::history::{Event, EventKind, Process, F};
use lockpick_checker::lock::{Finding, FindingKind};
use lockpick_checker::results::RunResults;
use lockpick_checker::verdict::Verdict;
use std::collections::HashMap;

pub use lockpick_store::explore::Found;

/// A finding that is a safety violation: everything the checker calls a violation except a
/// deadlock or a lockout, which are liveness.
pub fn is_safety(f: &Finding) -> bool {
    match f.kind {
        FindingKind::DoubleHolder
        | FindingKind::StaleWrite
        | FindingKind::LostUpdate
        | FindingKind::PhantomIncrement => true,
        FindingKind::Deadlock
        | FindingKind::Lockout
        | FindingKind::RejectedStaleWrite
        | FindingKind::SilentLoss
        | FindingKind::SilentRetake => false,
    }
}

/// How long a reply may take from the adapter's counting its lease to lockpick's reading it
/// when nothing stopped the adapter: a pipe and a busy 2-core machine's scheduling, far
/// above the sub-millisecond it usually takes.
pub const REPLY_SLACK_MS: u64 = 50;

/// One acquire or renewal that succeeded, as its process counts its lease.
#[derive(Debug, Clone, Copy)]
struct Grant {
    invoke_ns: u64,
    ok_ns: u64,
    f: F,
    lease_ms: u64,
    /// The lease the request asked for (the server's time to live).
    asked_ms: u64,
    /// The lease the reply said the library holds, counted from the reply.
    claimed_ms: Option<u64>,
    /// When the request that won was sent, if the client said (a built-in recipe).
    sent_ns: Option<u64>,
}

impl Grant {
    /// The earliest the server can have started this lease: when the request that won was
    /// sent, if the client said, else the request.
    fn earliest(&self) -> u64 {
        self.sent_ns
            .map_or(self.invoke_ns, |s| s.max(self.invoke_ns))
    }

    /// Until when the lock was this grant's holder's, at least, whatever the server's clock
    /// said: from the request ([`Grant::earliest`]), and from the reply by the library's claim unless `stopped`
    /// (the holder was paused between them, so the reply may have been counted long before
    /// lockpick read it).
    fn granted_until(&self, stopped: bool) -> u64 {
        let from_request = self
            .earliest()
            .saturating_add(self.lease_ms.saturating_mul(1_000_000));
        match self.claimed_ms {
            Some(claim) if !stopped => from_request.max(
                self.ok_ns
                    .saturating_add(claim.saturating_mul(1_000_000))
                    .saturating_sub(REPLY_SLACK_MS * 1_000_000),
            ),
            _ => from_request,
        }
    }

    /// The earliest the server can have granted it: [`Grant::earliest`], or, by the library's claim
    /// (counted from when it sent the request that won: a claim of `c` of an asked `t` says
    /// that request went `t - c` before the reply) unless `stopped`, the reply less that and
    /// the reply's slack. Without that, an acquire that polled for a second may have been
    /// granted at any time in that second.
    fn granted_from(&self, stopped: bool) -> u64 {
        match self.claimed_ms {
            Some(claim) if !stopped => {
                let before_reply = self.asked_ms.saturating_sub(claim) + REPLY_SLACK_MS;
                self.earliest()
                    .max(self.ok_ns.saturating_sub(before_reply * 1_000_000))
            }
            _ => self.earliest(),
        }
    }
}

/// Every successful acquire and renewal, by (process, lock).
fn grants(
    events: &[Event],
    default_lease_ms: u64,
    from: LeaseFrom,
) -> HashMap<(u64, String), Vec<Grant>> {
    let mut open: HashMap<u64, (u64, F, Option<u64>)> = HashMap::new();
    let mut out: HashMap<(u64, String), Vec<Grant>> = HashMap::new();
    for e in events {
        let Process::Client(p) = e.process else {
            continue;
        };
        if !matches!(e.f, F::Acquire | F::Renew) {
            continue;
        }
        match e.kind {
            EventKind::Invoke => {
                open.insert(p, (e.time_ns, e.f, e.value.lease_ms));
            }
            EventKind::Ok => {
                if let Some((invoke_ns, f, asked)) = open.remove(&p) {
                    out.entry((p, e.lock.clone().unwrap_or_default()))
                        .or_default()
                        .push(Grant {
                            invoke_ns,
                            ok_ns: e.time_ns,
                            f,
                            lease_ms: e.value.lease_ms.or(asked).unwrap_or(default_lease_ms),
                            asked_ms: asked.unwrap_or(default_lease_ms),
                            claimed_ms: match from {
                                LeaseFrom::Reply => e.value.lease_ms,
                                LeaseFrom::Request => None,
                            },
                            sent_ns: e.value.sent_ns,
                        });
                }
            }
            EventKind::Fail | EventKind::Info => {
                open.remove(&p);
            }
        }
    }
    out
}

fn is_clock(w: &FaultWindow) -> bool {
    w.f == F::Clock
}

/// A node crash (a client crash names a client and no node).
fn is_node_crash(w: &FaultWindow) -> bool {
    w.f == F::Crash && !w.nodes.is_empty()
}

/// What the environment did before `end_ns` that can end a lease early whatever the lock's
/// code: a clock moved (its effect on the server's expiry times outlasts the fault window) or
/// a node that crashed and forgot. `None` when neither happened.
fn environment(windows: &[FaultWindow], end_ns: u64) -> Option<Found> {
    let before = |w: &&FaultWindow| w.start_ns < end_ns;
    if windows.iter().filter(before).any(is_clock) {
        Some(Found::Clock)
    } else if windows.iter().filter(before).any(is_node_crash) {
        Some(Found::NodeRestart)
    } else {
        None
    }
}

/// The class of one double-holder finding.
fn double(
    f: &Finding,
    grants: &HashMap<(u64, String), Vec<Grant>>,
    windows: &[FaultWindow],
) -> Found {
    let (Some(&a), Some(w)) = (f.processes.first(), f.window) else {
        return Found::LockBug;
    };
    let lock = f.lock.clone().unwrap_or_default();
    let empty = Vec::new();
    let of_a = grants.get(&(a, lock.clone())).unwrap_or(&empty);
    // `a`'s holding began with its last acquire before the overlap; its renewals follow.
    let Some(start) = of_a
        .iter()
        .rposition(|g| g.f == F::Acquire && g.ok_ns <= w.start_ns)
    else {
        return Found::LockBug;
    };
    let holding = &of_a[start..];
    // Whether process `p` was stopped (a client pause) between a grant's request and its reply;
    // a pause that touches either end counts, since then the reply's lease is not the library's
    // to claim, nor does the reply say when the request that won went.
    let stopped = |p: u64, g: &Grant| {
        windows
            .iter()
            .any(|w| w.f == F::Pause && w.client == Some(p) && w.overlaps(g.invoke_ns, g.ok_ns))
    };
    let granted_until = |g: &Grant| g.granted_until(stopped(a, g));
    // A renewal of `a` asked for after `b` was granted the lock, that succeeded: at `b`'s
    // grant the lock was not `a`'s, so the server extended what was not `a`'s to extend. A correct renewal fails there whatever a clock or a crash did.
    let renewed_anothers = holding
        .iter()
        .any(|g| g.f == F::Renew && g.invoke_ns >= w.start_ns && g.invoke_ns < w.end_ns);
    if renewed_anothers {
        return Found::LockBug;
    }
    let granted_while_valid = holding
        .iter()
        .filter(|g| g.invoke_ns < w.end_ns)
        .any(|g| granted_until(g) > w.start_ns);
    // `b`'s grant: its last acquire replied by the overlap's start. If the server may have
    // granted it before `a`'s reply, `a`'s acquire must have come inside `b`'s lease for the
    // lock to be at fault; else `b` was granted, stood still past its lease, and replied late.
    let b_granted = f.processes.get(1).and_then(|&b| {
        let g = grants
            .get(&(b, lock))?
            .iter()
            .rev()
            .find(|g| g.f == F::Acquire && g.ok_ns <= w.start_ns)?;
        Some((*g, stopped(b, g)))
    });
    let a_acquired = &holding[0];
    let in_order = b_granted.is_none_or(|(g, stopped)| {
        g.granted_from(stopped) >= a_acquired.ok_ns || a_acquired.ok_ns < g.granted_until(stopped)
    });
    if granted_while_valid && in_order {
        environment(windows, w.end_ns).unwrap_or(Found::LockBug)
    } else {
        Found::Kleppmann
    }
}

/// What a run found: the worst class of its safety violations.
pub fn classify(
    results: &RunResults,
    events: &[Event],
    default_lease_ms: u64,
    from: LeaseFrom,
) -> Found {
    explain(results, events, default_lease_ms, from).0
}

/// What a run found, and the safety violation that class is of (`None` for a history that is
/// not linearizable with no lock finding), so the summary shown is the one that explains the
/// class: a run with a Kleppmann overlap and a later one after a clock jump is `clock`, and
/// says the second.
pub fn explain<'r>(
    results: &'r RunResults,
    events: &[Event],
    default_lease_ms: u64,
    from: LeaseFrom,
) -> (Found, Option<&'r Finding>) {
    let safety: Vec<&Finding> = results
        .lock
        .violations
        .iter()
        .filter(|f| is_safety(f))
        .collect();
    let lin_invalid = results
        .linearizability
        .as_ref()
        .is_some_and(|l| l.verdict == Verdict::Invalid);
    let windows = fault_windows(events);
    if safety.is_empty() {
        // A linearizability violation with no lock finding to explain it: the lock's own,
        // unless a node's clock moved, which ends a lease early by the server's count.
        let found = match (lin_invalid, environment(&windows, u64::MAX)) {
            (false, _) => Found::Nothing,
            (true, Some(env)) => env,
            (true, None) => Found::LockBug,
        };
        return (found, None);
    }
    let grants = grants(events, default_lease_ms, from);
    worst(&safety, &grants, &windows)
}

/// The worst class among `safety` violations, and the first violation of that class.
fn worst<'f>(
    safety: &[&'f Finding],
    grants: &HashMap<(u64, String), Vec<Grant>>,
    windows: &[FaultWindow],
) -> (Found, Option<&'f Finding>) {
    let has_double = safety.iter().any(|g| g.kind == FindingKind::DoubleHolder);
    safety
        .iter()
        .map(|&f| {
            let class = match f.kind {
                FindingKind::DoubleHolder => double(f, grants, windows),
                // Stale writes and lost updates come from two holders; name them by a double
                // holder when one is listed, else as the lock's.
                FindingKind::StaleWrite
                | FindingKind::LostUpdate
                | FindingKind::PhantomIncrement
                | FindingKind::Deadlock
                | FindingKind::Lockout
                | FindingKind::RejectedStaleWrite
                | FindingKind::SilentLoss
                | FindingKind::SilentRetake => {
                    if has_double {
                        Found::Nothing
                    } else {
                        Found::LockBug
                    }
                }
            };
            (class, Some(f))
        })
        // The worst class; among equals, the first violation.
        .min_by_key(|(class, _)| *class)
        .unwrap_or((Found::Nothing, None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockpick_checker::history::parse_history;
    use lockpick_checker::lock::TimeWindow;

    /// A history line: time in ms, process, type, f, and extra JSON fields.
    fn line(i: u64, ms: u64, p: &str, kind: &str, f: &str, extra: &str) -> String {
        let lock = if p.starts_with('"') {
            ""
        } else {
            r#","lock":"l""#
        };
        format!(
            r#"{{"v":1,"index":{i},"time_ns":{},"process":{p},"type":"{kind}","f":"{f}"{lock}{extra}}}"#,
            ms * 1_000_000
        )
    }

    fn history(ops: &[(u64, &str, &str, &str, &str)]) -> Vec<Event> {
        let text: Vec<String> = ops
            .iter()
            .enumerate()
            .map(|(i, (ms, p, kind, f, extra))| line(i as u64, *ms, p, kind, f, extra))
            .collect();
        parse_history(&(text.join("\n") + "\n")).unwrap()
    }

    /// A nemesis event of the history: time in ms, f, and its value.
    fn nemesis(
        ms: u64,
        f: &'static str,
        value: &'static str,
    ) -> (u64, &'static str, &'static str, &'static str, &'static str) {
        (ms, "\"nemesis\"", "info", f, value)
    }

    fn finding(a: u64, b: u64, start_ms: u64, end_ms: u64) -> Finding {
        let mut f: Finding = serde_json::from_value(serde_json::json!({
            "kind": "double-holder", "summary": "", "lock": "l", "indices": [],
            "processes": [a, b], "tokens": [], "window": null, "faults": [], "count": null
        }))
        .unwrap();
        f.window = Some(TimeWindow {
            start_ns: start_ms * 1_000_000,
            end_ns: end_ms * 1_000_000,
        });
        f
    }

    const LEASE: &str = r#","value":{"lease_ms":1000}"#;

    #[test]
    fn a_second_holder_after_the_first_ones_lease_ran_out_is_kleppmanns_case() {
        let h = history(&[
            (0, "1", "invoke", "acquire", LEASE),
            (5, "1", "ok", "acquire", ""),
            (1100, "2", "invoke", "acquire", LEASE),
            (1105, "2", "ok", "acquire", ""),
        ]);
        let g = grants(&h, 1000, LeaseFrom::Request);
        assert_eq!(
            double(&finding(1, 2, 1105, 2000), &g, &[]),
            Found::Kleppmann
        );
    }

    #[test]
    fn a_second_holder_while_the_first_ones_lease_still_ran_is_a_bug() {
        let h = history(&[
            (0, "1", "invoke", "acquire", LEASE),
            (5, "1", "ok", "acquire", ""),
            (500, "2", "invoke", "acquire", LEASE),
            (505, "2", "ok", "acquire", ""),
        ]);
        let g = grants(&h, 1000, LeaseFrom::Request);
        assert_eq!(double(&finding(1, 2, 505, 900), &g, &[]), Found::LockBug);
    }

    #[test]
    fn a_renewal_that_succeeds_after_the_lease_ran_out_and_another_took_it_is_a_bug() {
        let h = history(&[
            (0, "1", "invoke", "acquire", LEASE),
            (5, "1", "ok", "acquire", ""),
            (1100, "2", "invoke", "acquire", LEASE),
            (1105, "2", "ok", "acquire", ""),
            (1500, "1", "invoke", "renew", LEASE),
            (1502, "1", "ok", "renew", ""),
        ]);
        let g = grants(&h, 1000, LeaseFrom::Request);
        assert_eq!(double(&finding(1, 2, 1105, 2000), &g, &[]), Found::LockBug);
        // The same history without the renewal: only the lease that ran out.
        let g = grants(&h[..4], 1000, LeaseFrom::Request);
        assert_eq!(
            double(&finding(1, 2, 1105, 2000), &g, &[]),
            Found::Kleppmann
        );
    }

    #[test]
    fn a_holder_that_waited_holds_the_lease_its_library_claimed_from_the_reply() {
        // Process 1 polled for 1.2 s before it won (as a waiter does while a stopped holder's
        // key runs out); its adapter said 999 ms were left. Process 2 was granted 300 ms
        // later: the GET-then-DEL release's bug. Counted from the request, the lease had
        // run out at 1000 ms and it read as Kleppmann's case.
        let claim = r#","value":{"lease_ms":999}"#;
        let h = history(&[
            (0, "1", "invoke", "acquire", LEASE),
            (1200, "1", "ok", "acquire", claim),
            (1400, "2", "invoke", "acquire", LEASE),
            (1500, "2", "ok", "acquire", claim),
        ]);
        let window = finding(1, 2, 1500, 2000);
        let g = grants(&h, 1000, LeaseFrom::Reply);
        assert_eq!(double(&window, &g, &[]), Found::LockBug);
        let g = grants(&h, 1000, LeaseFrom::Request);
        assert_eq!(double(&window, &g, &[]), Found::Kleppmann);
        // Past the claim (less the reply's slack), the holder only believed it held the lock.
        let g = grants(&h, 1000, LeaseFrom::Reply);
        assert_eq!(
            double(&finding(1, 2, 2160, 2500), &g, &[]),
            Found::Kleppmann
        );
    }

    #[test]
    fn a_claim_whose_reply_a_pause_held_back_counts_from_the_request() {
        // Stopped inside its acquire after the library counted its lease, process 1's reply
        // was read 1.1 s late: the claim counts from an instant lockpick does not know.
        let h = history(&[
            (0, "1", "invoke", "acquire", LEASE),
            nemesis(
                50,
                "pause",
                r#","value":{"client":1,"point":"during-op","ms":1100}"#,
            ),
            nemesis(1150, "resume", r#","value":{"client":1}"#),
            (1200, "1", "ok", "acquire", r#","value":{"lease_ms":999}"#),
            (1400, "2", "invoke", "acquire", LEASE),
            (1500, "2", "ok", "acquire", ""),
        ]);
        let g = grants(&h, 1000, LeaseFrom::Reply);
        let w = fault_windows(&h);
        assert_eq!(double(&finding(1, 2, 1500, 2000), &g, &w), Found::Kleppmann);
    }

    #[test]
    fn a_second_holder_stopped_inside_its_acquire_may_have_been_granted_first() {
        // Seen on the correct compare-and-delete toy: process 2 sent its SET at 0 and was
        // stopped before it read the reply; its key ran out at 1000 while it stood still;
        // process 1 was granted at 2100 and, 2900 ms late, process 2's reply said 999 ms.
        // By the replies process 1 held first, and its lease still ran; but the server
        // granted process 2 first: its late reply is Kleppmann's case, not the lock's.
        let claim = r#","value":{"lease_ms":999}"#;
        let h = history(&[
            (0, "2", "invoke", "acquire", LEASE),
            nemesis(
                1,
                "pause",
                r#","value":{"client":2,"point":"during-op","ms":2913}"#,
            ),
            (2100, "1", "invoke", "acquire", LEASE),
            (2101, "1", "ok", "acquire", claim),
            nemesis(2914, "resume", r#","value":{"client":2}"#),
            (2915, "2", "ok", "acquire", claim),
        ]);
        let window = finding(1, 2, 2915, 3000);
        let w = fault_windows(&h);
        let g = grants(&h, 1000, LeaseFrom::Reply);
        assert_eq!(double(&window, &g, &w), Found::Kleppmann);
        // Not stopped, process 2's library says it sent the request that won 1 ms before its
        // reply, inside process 1's lease: the lock's doing.
        assert_eq!(double(&window, &g, &[]), Found::LockBug);
        // With no claim to say when, the request that won may be any in its 2.9 s of asking.
        let g = grants(&h, 1000, LeaseFrom::Request);
        assert_eq!(double(&window, &g, &[]), Found::Kleppmann);
        // Granted first and still inside its own lease when process 1 was granted: a bug
        // whichever the server granted first.
        let h = history(&[
            (0, "2", "invoke", "acquire", LEASE),
            (500, "1", "invoke", "acquire", LEASE),
            (501, "1", "ok", "acquire", ""),
            (700, "2", "ok", "acquire", ""),
        ]);
        let g = grants(&h, 1000, LeaseFrom::Request);
        assert_eq!(double(&finding(1, 2, 700, 900), &g, &[]), Found::LockBug);
    }

    /// The class of `f` in `h`, and in `h` as a built-in recipe that did not say when it sent
    /// would have written it.
    fn with_and_without_sent(h: &[Event], f: &Finding) -> (Found, Found) {
        let mut without = h.to_vec();
        for e in &mut without {
            e.value.sent_ns = None;
        }
        let class = |h: &[Event]| double(f, &grants(h, 1000, LeaseFrom::Request), &[]);
        (class(h), class(&without))
    }

    #[test]
    fn a_built_in_recipe_counts_from_the_request_that_won() {
        // A built-in recipe records when it sent the request that won (`sent_ns`). Process 1
        // polled for 1.2 s; its winning SET went at 1200, so its lease ran until 2200, and
        // process 2's grant at 1400 was inside it. Counted from the invocation it had run out.
        let sent = |ms: u64| format!(r#","value":{{"sent_ns":{}}}"#, ms * 1_000_000);
        let (s1200, s1399, s1500, s1799) = (sent(1200), sent(1399), sent(1500), sent(1799));
        let h = history(&[
            (0, "1", "invoke", "acquire", LEASE),
            (1201, "1", "ok", "acquire", &s1200),
            (1300, "2", "invoke", "acquire", LEASE),
            (1400, "2", "ok", "acquire", &s1399),
        ]);
        assert_eq!(
            with_and_without_sent(&h, &finding(1, 2, 1400, 1800)),
            (Found::LockBug, Found::Kleppmann)
        );
        // Process 2 polled from before process 1's grant, longer than a lease: by its
        // invocation it may have been granted first, its lease run out, and its reply come
        // late. Its winning request went at 1799, after process 1's reply: the lock's doing.
        let h = history(&[
            (0, "2", "invoke", "acquire", LEASE),
            (1500, "1", "invoke", "acquire", LEASE),
            (1505, "1", "ok", "acquire", &s1500),
            (1800, "2", "ok", "acquire", &s1799),
        ]);
        assert_eq!(
            with_and_without_sent(&h, &finding(1, 2, 1800, 2000)),
            (Found::LockBug, Found::Kleppmann)
        );
    }

    #[test]
    fn a_failed_renewal_grants_nothing() {
        let h = history(&[
            (0, "1", "invoke", "acquire", LEASE),
            (5, "1", "ok", "acquire", ""),
            (1100, "2", "invoke", "acquire", LEASE),
            (1105, "2", "ok", "acquire", ""),
            (1500, "1", "invoke", "renew", LEASE),
            (1502, "1", "fail", "renew", ""),
        ]);
        let g = grants(&h, 1000, LeaseFrom::Request);
        assert_eq!(
            double(&finding(1, 2, 1105, 1502), &g, &[]),
            Found::Kleppmann
        );
    }

    #[test]
    fn a_clock_moved_during_the_holding_names_the_clock() {
        let h = history(&[
            (0, "1", "invoke", "acquire", LEASE),
            (5, "1", "ok", "acquire", ""),
            nemesis(
                100,
                "clock",
                r#","value":{"nodes":["n1"],"offset_ms":5000}"#,
            ),
            (500, "2", "invoke", "acquire", LEASE),
            (505, "2", "ok", "acquire", ""),
        ]);
        let g = grants(&h, 1000, LeaseFrom::Request);
        let w = fault_windows(&h);
        assert_eq!(double(&finding(1, 2, 505, 900), &g, &w), Found::Clock);
    }

    #[test]
    fn the_violation_shown_is_the_one_that_explains_the_class() {
        // p1 holds past its lease (Kleppmann's case, no fault); later a clock jump on n1 lets
        // p3 in beside p2: the run is `clock`, and its summary must be the second overlap's.
        let h = history(&[
            (0, "1", "invoke", "acquire", LEASE),
            (5, "1", "ok", "acquire", ""),
            (1100, "2", "invoke", "acquire", LEASE),
            (1105, "2", "ok", "acquire", ""),
            nemesis(
                1200,
                "clock",
                r#","value":{"nodes":["n1"],"offset_ms":5000}"#,
            ),
            (1300, "3", "invoke", "acquire", LEASE),
            (1305, "3", "ok", "acquire", ""),
        ]);
        let g = grants(&h, 1000, LeaseFrom::Request);
        let w = fault_windows(&h);
        let mut first = finding(1, 2, 1105, 1200);
        first.summary = "p1 past its lease".into();
        let mut second = finding(2, 3, 1305, 1500);
        second.summary = "after the jump".into();
        let (class, shown) = worst(&[&first, &second], &g, &w);
        assert_eq!(class, Found::Clock);
        assert_eq!(shown.unwrap().summary, "after the jump");
        let (class, shown) = worst(&[&first], &g, &w);
        assert_eq!(
            (class, shown.unwrap().summary.as_str()),
            (Found::Kleppmann, "p1 past its lease")
        );
        assert_eq!(worst(&[], &g, &w), (Found::Nothing, None));
    }

    #[test]
    fn a_clock_moved_or_a_node_crashed_before_the_overlap_names_that_not_the_lock() {
        let h = history(&[
            nemesis(0, "clock", r#","value":{"nodes":["n1"],"offset_ms":5000}"#),
            nemesis(50, "clock-reset", r#","value":{"nodes":["n1"]}"#),
            (100, "1", "invoke", "acquire", LEASE),
            (105, "1", "ok", "acquire", ""),
            (500, "2", "invoke", "acquire", LEASE),
            (505, "2", "ok", "acquire", ""),
        ]);
        let g = grants(&h, 1000, LeaseFrom::Request);
        let w = fault_windows(&h);
        assert_eq!(double(&finding(1, 2, 505, 900), &g, &w), Found::Clock);
        let h = history(&[
            (0, "1", "invoke", "acquire", LEASE),
            (5, "1", "ok", "acquire", ""),
            nemesis(100, "crash", r#","value":{"nodes":["n1"]}"#),
            nemesis(300, "restart", r#","value":{"nodes":["n1"]}"#),
            (500, "2", "invoke", "acquire", LEASE),
            (505, "2", "ok", "acquire", ""),
        ]);
        let g = grants(&h, 1000, LeaseFrom::Request);
        let w = fault_windows(&h);
        assert_eq!(double(&finding(1, 2, 505, 900), &g, &w), Found::NodeRestart);
        // But a renewal of an expired lease that succeeds is the lock's, crash or not.
        let mut renewed = h.clone();
        renewed.extend(history(&[
            (1100, "1", "invoke", "renew", LEASE),
            (1102, "1", "ok", "renew", ""),
        ]));
        for (i, e) in renewed.iter_mut().enumerate() {
            e.index = i as u64;
        }
        let g = grants(&renewed, 1000, LeaseFrom::Request);
        assert_eq!(double(&finding(1, 2, 505, 1500), &g, &w), Found::LockBug);
        // A client crash is no node's.
        let h = history(&[
            (0, "1", "invoke", "acquire", LEASE),
            (5, "1", "ok", "acquire", ""),
            nemesis(100, "crash", r#","value":{"client":3}"#),
            (500, "2", "invoke", "acquire", LEASE),
            (505, "2", "ok", "acquire", ""),
        ]);
        let g = grants(&h, 1000, LeaseFrom::Request);
        let w = fault_windows(&h);
        assert_eq!(double(&finding(1, 2, 505, 900), &g, &w), Found::LockBug);
    }

    #[test]
    fn a_deadlock_is_not_a_safety_finding() {
        let mut f = finding(1, 2, 0, 1);
        assert!(is_safety(&f));
        f.kind = FindingKind::Deadlock;
        assert!(!is_safety(&f));
        f.kind = FindingKind::Lockout;
        assert!(!is_safety(&f));
    }
}
