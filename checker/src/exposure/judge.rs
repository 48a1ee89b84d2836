//! Each rule judged on one fault instance: the window each candidate hold gives under the
//! rule, and whether another client asked inside it.

use super::parts::{Cand, Instance};
use super::{Exposure, LockShape, Rule, Window};
use crate::faults::secs;
use std::collections::BTreeSet;

/// A candidate under the rule: `Ok(the window in which a rival's ask could have made a second
/// holder)` or `Err(why this hold could not be broken by the instance)`.
type Judged = Result<(u64, u64), String>;

/// The instance judged: exposed by its first candidate whose window met an ask.
pub(super) fn judge(i: &Instance, lock: &LockShape, run_end_ns: u64) -> Exposure {
    let mut why_not: Option<String> = None;
    let mut window: Option<Window> = None;
    let mut held_request = false;
    let mut waiter = false;
    for cand in &i.cands {
        // A cut also holds the requests sent across it: a grant that came back past its lease
        // is judged as latency judges one, even where the cut left a quorum (a client that
        // waits for every node waits for the cut one).
        let held = i.rule == Rule::CutPastLease && !cand.waited && came_back_past_lease(cand, lock);
        let judged = match i.rule {
            Rule::PauseOutlastsLease => silenced_past_lease(i, cand, lock, run_end_ns, "pause"),
            Rule::CutPastLease if cand.waited => waited_through(i, cand, lock),
            Rule::CutPastLease if held => delay(cand, lock, run_end_ns),
            Rule::CutPastLease => cut(i, cand, lock, run_end_ns),
            Rule::RestartInsideLease => restart(i, cand, lock, run_end_ns),
            Rule::JumpPastLease => jump(i, cand, lock, run_end_ns),
            Rule::DelayPastLease => delay(cand, lock, run_end_ns),
            Rule::HolderCrashed => Ok((i.start_ns, run_end_ns)),
            Rule::InForceDuringContendedHold => in_force(i, cand, run_end_ns),
        };
        // The rules of a silenced holder need the rival granted, not only asking: see
        // `Rule::PauseOutlastsLease`.
        // A holder that gave its hold up inside a cut, past its lease, met the cut with its
        // own defence (it noticed it lost the session): the rival need only have asked, since
        // once the holder gave up nobody could be granted on top of it.
        let gave_up = (i.rule == Rule::CutPastLease && !cand.waited)
            .then(|| gave_up_inside(i, cand, lock, run_end_ns))
            .flatten();
        let judged = match gave_up {
            Some(window) => Ok(window),
            None => judged,
        };
        let granted = match i.rule {
            Rule::PauseOutlastsLease | Rule::CutPastLease => gave_up.is_none() && !held,
            Rule::RestartInsideLease
            | Rule::JumpPastLease
            | Rule::DelayPastLease
            | Rule::HolderCrashed
            | Rule::InForceDuringContendedHold => false,
        };
        // A late grant the lock refused is the defence latency tests, and a waiter's outcome
        // past its lease the one a cut tests: no rival needed.
        let windowed = match cand.refused || cand.waited {
            true => judged.map(|(from, to)| Window {
                from_ns: from,
                to_ns: to,
                holder: cand.holder,
                askers: Vec::new(),
                lock: cand.hold.lock.clone(),
                lease_ms: lease(cand, lock),
            }),
            false => judged.and_then(|(from, to)| asked(cand, from, to, granted)),
        };
        let windowed = windowed.map(|w| Window {
            lease_ms: lease(cand, lock),
            ..w
        });
        match windowed {
            Ok(w) => {
                window = Some(w);
                held_request = held && gave_up.is_none();
                waiter = cand.waited;
                break;
            }
            Err(why) => {
                why_not.get_or_insert(why);
            }
        }
    }
    // A crash may also make the server forget the tokens it handed out: a grant with a token
    // after the restart, following grants with tokens before the crash, could repeat one.
    let mut why_tokens = None;
    if window.is_none() && i.rule == Rule::RestartInsideLease && lock.touches(&i.nodes) {
        if let (Some(restart), Some(after)) = (i.end_ns, i.token_after) {
            let client = after.client;
            window = Some(Window {
                from_ns: restart,
                to_ns: after.at_ns,
                holder: client,
                askers: Vec::new(),
                lock: None,
                lease_ms: None,
            });
            why_tokens = Some(format!(
                "the node came back at {} and client {client} was granted a token at {}, after tokens {} to {} were granted before the crash: a server that forgot its counter and counted again from {} could hand out one below {}",
                secs(restart),
                secs(after.at_ns),
                after.lowest,
                after.highest,
                after.lowest,
                after.highest,
            ));
        }
    }
    let why = match (&window, why_tokens) {
        (Some(_), Some(why)) => why,
        (Some(w), None) if waiter => waited_why(w),
        (Some(w), None) => exposed_why(i.rule, w, held_request, lock.renewed_unseen),
        (None, _) => why_not.unwrap_or_else(|| no_hold(i.rule)),
    };
    Exposure {
        fault: i.verb,
        rule: i.rule,
        start_ns: i.start_ns,
        end_ns: i.end_ns,
        nodes: i.nodes.clone(),
        client: i.client,
        window,
        why,
    }
}

/// The window `[from, to]` if another client asked inside it (and was granted there, if
/// `granted`).
fn asked(cand: &Cand, from: u64, to: u64, granted: bool) -> Result<Window, String> {
    if from > to {
        return Err(format!(
            "the window closed before it opened ({} after {})",
            secs(from),
            secs(to)
        ));
    }
    let askers: BTreeSet<u64> = (cand.asks.iter())
        .filter(|a| a.invoke_ns <= to)
        .filter(|a| match granted {
            // Granted inside the window: the rival knew it held while the holder still did,
            // which a double holder or a stale write needs (a grant whose reply came after
            // the holder was done made no second holder).
            true => a.granted && a.done_ns >= from && a.done_ns <= to,
            false => a.done_ns >= from,
        })
        .map(|a| a.client)
        .collect();
    if askers.is_empty() && granted {
        return Err(format!(
            "no other client was granted the lock from {} to {}, while client {} could have lost it: the server had not let its lease go",
            secs(from),
            secs(to),
            cand.holder
        ));
    }
    if askers.is_empty() {
        return Err(format!(
            "no other client asked for the lock from {} to {}, while client {} could have lost it",
            secs(from),
            secs(to),
            cand.holder
        ));
    }
    Ok(Window {
        from_ns: from,
        to_ns: to,
        holder: cand.holder,
        askers: askers.into_iter().collect(),
        lock: cand.hold.lock.clone(),
        lease_ms: None,
    })
}

/// The lease a hold runs on: the history's, else the lock's.
fn lease(cand: &Cand, lock: &LockShape) -> Option<u64> {
    cand.hold.lease_ms.or(lock.lease_ms)
}

/// When `cand`'s lease ran out at the latest, for a holder that fell silent at `silent_from`
/// (`None`: it could reach the lock throughout): one lease after its grant (or last renewal
/// the history shows), or, for a lock its library renews unseen, one lease after it fell
/// silent, and never while it could still renew (`u64::MAX`). `None`: a lock without a lease.
fn lease_end(cand: &Cand, lock: &LockShape, silent_from: Option<u64>) -> Option<u64> {
    let lease_ns = lease(cand, lock)?.saturating_mul(1_000_000);
    let granted = cand.hold.since_ns.saturating_add(lease_ns);
    Some(match (lock.renewed_unseen, silent_from) {
        (false, _) => granted,
        (true, Some(silent)) => granted.max(silent.saturating_add(lease_ns)),
        (true, None) => u64::MAX,
    })
}

fn hold_end(cand: &Cand, run_end_ns: u64) -> u64 {
    cand.end_ns.unwrap_or(run_end_ns)
}

/// A holder that could not speak to the lock from the instance's start to its end: exposed
/// past the lease it had left (from the lease's end to the hold's), or over the whole hold for
/// a lock without a lease.
fn silenced_past_lease(
    i: &Instance,
    cand: &Cand,
    lock: &LockShape,
    run_end_ns: u64,
    what: &str,
) -> Judged {
    let end = i.end_ns.unwrap_or(run_end_ns);
    let hold_end = hold_end(cand, run_end_ns);
    let (Some(lease), Some(lease_end)) =
        (lease(cand, lock), lease_end(cand, lock, Some(i.start_ns)))
    else {
        return Ok((i.start_ns, hold_end));
    };
    if end <= lease_end {
        let began = lease_end.saturating_sub(lease.saturating_mul(1_000_000));
        let renewed = match lock.renewed_unseen {
            true => " (its library renews it unseen, so at the latest when it fell silent)",
            false => "",
        };
        return Err(format!(
            "the {what} ended {} ms after client {}'s lease began{renewed}, within its {lease} ms lease",
            end.saturating_sub(began) / 1_000_000,
            cand.holder
        ));
    }
    Ok((lease_end.max(i.start_ns), hold_end))
}

/// Whether `cand`'s holder gave its hold up while cut off and past its lease (it sent its
/// release, or the hold ended, after the lease's end and before the cut's: a release sent
/// inside the cut is often answered only after the heal): the window from the lease's end to
/// the cut's.
fn gave_up_inside(
    i: &Instance,
    cand: &Cand,
    lock: &LockShape,
    run_end_ns: u64,
) -> Option<(u64, u64)> {
    let lease_end = lease_end(cand, lock, Some(i.start_ns))?;
    let cut_end = i.end_ns.unwrap_or(run_end_ns);
    let ended = cand.release_sent_ns.or(cand.end_ns)?;
    let short = match lock.reachable(&i.nodes) {
        Some((left, _)) => left < lock.quorum,
        None => true,
    };
    (short && ended > lease_end && ended <= cut_end).then_some((lease_end.max(i.start_ns), cut_end))
}

fn cut(i: &Instance, cand: &Cand, lock: &LockShape, run_end_ns: u64) -> Judged {
    // A holder whose own renewal the cut held past its lease was cut off all the same.
    if !cand.stalled {
        short_of_quorum(i, lock)?;
    }
    silenced_past_lease(i, cand, lock, run_end_ns, "cut")
}

/// `Err(why)` when the cut left every client a quorum of the lock's nodes.
fn short_of_quorum(i: &Instance, lock: &LockShape) -> Result<(), String> {
    match lock.reachable(&i.nodes) {
        Some((left, of)) if left >= lock.quorum => Err(format!(
            "the cut of {} left every client {left} of the lock's {of} nodes, a quorum of {}",
            i.nodes.join(","),
            lock.quorum
        )),
        _ => Ok(()),
    }
}

/// A waiting acquire (`Cand::waited`) the cut kept from a quorum of the lock's nodes past the
/// lease: the window from the lease's end (counted from the cut's start, when the keep-alives
/// stopped arriving) to the acquire's answer.
fn waited_through(i: &Instance, cand: &Cand, lock: &LockShape) -> Judged {
    short_of_quorum(i, lock)?;
    let lease = lease(cand, lock).ok_or("the lock keeps no lease for a waiter to lose")?;
    let lease_out = i.start_ns.saturating_add(lease.saturating_mul(1_000_000));
    Ok((lease_out, cand.hold.since_ns))
}

/// What a waiter's window opened, in a sentence.
fn waited_why(w: &Window) -> String {
    let lease = w
        .lease_ms
        .map_or("the".to_owned(), |ms| format!("the {ms} ms"));
    format!(
        "the cut kept a waiting client from a quorum past {lease} lease: client {} was still waiting when its session could have ended, at {}, and its acquire came back at {}",
        w.holder,
        secs(w.from_ns),
        secs(w.to_ns)
    )
}

fn restart(i: &Instance, cand: &Cand, lock: &LockShape, run_end_ns: u64) -> Judged {
    if !lock.touches(&i.nodes) {
        return Err(format!("{} grants no part of the lock", i.nodes.join(",")));
    }
    let Some(restart) = i.end_ns else {
        return Err("the node did not come back before the run ended".to_owned());
    };
    // A crash of one node leaves the holder the others to renew with.
    let until = hold_end(cand, run_end_ns).min(lease_end(cand, lock, None).unwrap_or(u64::MAX));
    if restart >= until {
        return Err(format!(
            "the node came back at {}, after client {}'s hold or lease ended at {}",
            secs(restart),
            cand.holder,
            secs(until)
        ));
    }
    Ok((restart, until))
}

fn jump(i: &Instance, cand: &Cand, lock: &LockShape, run_end_ns: u64) -> Judged {
    if !lock.touches(&i.nodes) {
        return Err(format!("{} grants no part of the lock", i.nodes.join(",")));
    }
    // The jumped node counts the lease from the holder's last renewal it saw: unseen, as late
    // as the jump.
    let Some(lease_end) = lease_end(cand, lock, Some(i.start_ns)) else {
        return Err("the lock keeps no lease, so it reads no clock".to_owned());
    };
    let left_ms = lease_end.saturating_sub(i.start_ns) / 1_000_000;
    let offset = i.offset_ms.unwrap_or(0);
    if offset <= 0 || offset.unsigned_abs() <= left_ms {
        return Err(format!(
            "a jump of {offset:+} ms, not forward past the {left_ms} ms client {} had left",
            cand.holder
        ));
    }
    Ok((i.start_ns, hold_end(cand, run_end_ns).min(lease_end)))
}

/// Whether `cand`'s grant came back later than its lease after its request was sent.
fn came_back_past_lease(cand: &Cand, lock: &LockShape) -> bool {
    let round_trip = cand.hold.since_ns.saturating_sub(cand.hold.sent_ns) / 1_000_000;
    lease(cand, lock).is_some_and(|lease| round_trip > lease)
}

fn delay(cand: &Cand, lock: &LockShape, run_end_ns: u64) -> Judged {
    let Some(lease) = lease(cand, lock) else {
        return Err("the lock keeps no lease for a slow grant to outlast".to_owned());
    };
    let round_trip = cand.hold.since_ns.saturating_sub(cand.hold.sent_ns) / 1_000_000;
    if round_trip <= lease && !cand.refused {
        return Err(format!(
            "client {}'s grant came back {round_trip} ms after it was sent, within its {lease} ms lease",
            cand.holder
        ));
    }
    Ok((
        cand.hold
            .sent_ns
            .saturating_add(lease.saturating_mul(1_000_000)),
        hold_end(cand, run_end_ns),
    ))
    .map(|w| match cand.refused {
        // The acquire's own stretch past its lease.
        true => (w.0, cand.hold.since_ns),
        false => w,
    })
}

fn in_force(i: &Instance, cand: &Cand, run_end_ns: u64) -> Judged {
    let from = i.start_ns.max(cand.hold.granted_ns);
    let to = i
        .end_ns
        .unwrap_or(run_end_ns)
        .min(hold_end(cand, run_end_ns));
    Ok((from, to))
}

/// Why an instance with no candidate hold opened no window.
fn no_hold(rule: Rule) -> String {
    match rule {
        Rule::PauseOutlastsLease => "the paused client held no lock when it stopped".to_owned(),
        Rule::HolderCrashed => "the crashed client held no lock".to_owned(),
        Rule::DelayPastLease => "no grant came back while the latency was in force".to_owned(),
        Rule::CutPastLease
        | Rule::RestartInsideLease
        | Rule::JumpPastLease
        | Rule::InForceDuringContendedHold => {
            "no client held the lock while the fault was in force".to_owned()
        }
    }
}

/// What an exposed instance opened, in a sentence; `held_request`: a cut's window from a
/// request it held past its lease.
fn exposed_why(rule: Rule, w: &Window, held_request: bool, renewed_unseen: bool) -> String {
    let askers: Vec<String> = w.askers.iter().map(u64::to_string).collect();
    let lease = w
        .lease_ms
        .map_or("the".to_owned(), |ms| format!("the {ms} ms"));
    let opened = match rule {
        Rule::PauseOutlastsLease => format!("the pause outlasted {lease} lease its client held"),
        Rule::CutPastLease if held_request => {
            format!("the cut held a grant's request until it came back past {lease} lease")
        }
        Rule::CutPastLease => format!("the cut kept the holder from a quorum past {lease} lease"),
        Rule::RestartInsideLease if renewed_unseen => {
            "the node came back while the holder's lease, which its library renews, was live"
                .to_owned()
        }
        Rule::RestartInsideLease => {
            format!("the node came back inside {lease} lease of the holder")
        }
        Rule::JumpPastLease => format!("the jump passed what was left of {lease} lease"),
        Rule::DelayPastLease => {
            format!("a grant came back past {lease} lease, or was refused as too late")
        }
        Rule::HolderCrashed => "the crashed client held the lock".to_owned(),
        Rule::InForceDuringContendedHold => "the fault was in force during a hold".to_owned(),
    };
    if w.askers.is_empty() {
        return format!(
            "{opened}: client {}'s acquire ran past its lease from {} to {}",
            w.holder,
            secs(w.from_ns),
            secs(w.to_ns)
        );
    }
    // A pause's or a cut's window begins where the lease surely ran out: counted from the
    // grant's reply, the latest it can have begun (a violation's sentence counts from the
    // request, the earliest), so the two times differ by the grant's round trip.
    let held = match rule {
        Rule::PauseOutlastsLease | Rule::CutPastLease if !held_request && renewed_unseen => {
            "held on past that lease (counted from when it fell silent, the latest its library can have renewed it)"
        }
        Rule::PauseOutlastsLease | Rule::CutPastLease if !held_request => {
            "held on past that lease (counted from its grant's reply)"
        }
        _ => "held",
    };
    format!(
        "{opened}: client {} {held} from {} to {}, and client{} {} asked",
        w.holder,
        secs(w.from_ns),
        secs(w.to_ns),
        if askers.len() == 1 { "" } else { "s" },
        askers.join(", ")
    )
}
