//! A double holder's sentence and evidence: what made the second grant possible first, when
//! the history shows it ([`Culprit`]), then the two holders; and the faults that overlapped
//! the culprit, or else any operation of the chain (the first grant and holding, the culprit,
//! the second grant).

use super::culprit::{Culprit, StaleOp};
use super::describe::{active_phrase, token_phrase};
use super::holdings::Holding;
use crate::faults::{secs, FaultWindow};
use crate::history::F;
use crate::lock::report::{Finding, FindingKind, TimeWindow};

/// Faults over `[from, to]` that bear on process `p`'s part: those on nodes and `p`'s own,
/// but not a pause of `p` that stopped it after its request's reply had come (it changed
/// nothing the request did).
fn over(faults: &[FaultWindow], p: u64, from: u64, to: u64) -> Vec<&FaultWindow> {
    faults
        .iter()
        .filter(|w| w.overlaps(from, to))
        .filter(|w| w.client.is_none_or(|c| c == p))
        .filter(|w| !(w.client == Some(p) && w.reply_came == Some(true)))
        .collect()
}

/// Faults over any stretch of `chain`.
fn over_any<'f>(faults: &'f [FaultWindow], chain: &[(u64, u64)]) -> Vec<&'f FaultWindow> {
    faults
        .iter()
        .filter(|w| chain.iter().any(|&(a, b)| w.overlaps(a, b)))
        .collect()
}

fn op_name(f: F) -> &'static str {
    match f {
        F::Renew => "renewal",
        _ => "release",
    }
}

/// "process 2's release (sent 1.204 s, answered 1.987 s, paused 0.750 s inside it) deleted
/// process 0's key", and the faults over that request; `crossed`: "may have deleted", its
/// reply having come before process 0's grant.
fn stale_lead<'f>(
    op: &StaleOp,
    a: &Holding,
    faults: &'f [FaultWindow],
    crossed: bool,
) -> (String, Vec<&'f FaultWindow>) {
    let named = over(faults, op.process, op.invoke_ns, op.done_ns);
    let paused: u64 = named
        .iter()
        .filter(|w| w.f == F::Pause && w.client == Some(op.process))
        .map(|w| w.end_ns - w.start_ns)
        .sum();
    let inside = if paused > 0 {
        format!(", paused {} inside it", secs(paused))
    } else {
        String::new()
    };
    let did = match (op.f, crossed) {
        (F::Renew, false) => "overwrote",
        (F::Renew, true) => "may have overwritten",
        (_, false) => "deleted",
        (_, true) => "may have deleted",
    };
    let crossing = if crossed {
        format!(
            " (its answer came before process {}'s grant, which it may have reached the server after: the two replies crossed)",
            a.process
        )
    } else {
        String::new()
    };
    let lead = format!(
        "process {}'s {} (sent {}, answered {}{inside}) {did} process {}'s key{crossing}",
        op.process,
        op_name(op.f),
        secs(op.invoke_ns),
        secs(op.done_ns),
        a.process,
    );
    (lead, named)
}

/// "process 0 wrote at 0.810 s, 0.500 s after its lease ran out" (or "after process 1's
/// grant"): the earlier holder's first write once the later one held, the write a fence would
/// have refused; the reader of a pause's double holder looks for it first. Empty when `a` wrote
/// nothing after `b`'s grant.
fn late_write(a: &Holding, b: &Holding, expired_ns: Option<u64>) -> String {
    let ran_out = if named_lease(a) {
        "its lease ran out"
    } else {
        "the lease asked for ran out"
    };
    let Some(w) = a
        .writes
        .iter()
        .filter(|w| w.invoke_ns >= b.start_ns)
        .min_by_key(|w| w.invoke_ns)
    else {
        return String::new();
    };
    let after = match expired_ns {
        Some(e) if e <= w.invoke_ns => {
            format!("{} after {ran_out}", secs(w.invoke_ns - e))
        }
        _ => format!("after process {}'s grant", b.process),
    };
    format!(
        "process {} wrote at {}, {after}",
        a.process,
        secs(w.invoke_ns)
    )
}

/// Whether the holder's lease is one its library named (or it has none), not only the one
/// lockpick asked for.
fn named_lease(h: &Holding) -> bool {
    h.lease.is_none_or(|l| l.named)
}

/// `a` (the earlier holder) overlapping `b`; both carry only the writes in the overlap;
/// `culprit` made `b`'s grant possible, if the history shows what did.
pub(crate) fn double(
    lock: &str,
    a: &Holding,
    b: &Holding,
    culprit: Option<Culprit>,
    faults: &[FaultWindow],
) -> Finding {
    let start = a.start_ns.max(b.start_ns);
    let end = a.end_ns.min(b.end_ns);
    let mut indices = vec![a.acquire_index, b.acquire_index, a.end_index, b.end_index];
    let mut chain = vec![(a.asked_ns, end), (b.asked_ns, b.start_ns)];
    let expired_ns = match &culprit {
        Some(Culprit::Expired { expired_ns, .. }) => Some(*expired_ns),
        _ => None,
    };
    let (lead, named) = match culprit {
        Some(Culprit::Stale(op)) => {
            indices.extend([op.invoke_index, op.done_index]);
            chain.push((op.invoke_ns, op.done_ns));
            stale_lead(&op, a, faults, false)
        }
        Some(Culprit::Crossed(op)) => {
            indices.extend([op.invoke_index, op.done_index]);
            chain.push((op.invoke_ns, op.done_ns));
            stale_lead(&op, a, faults, true)
        }
        Some(Culprit::Expired {
            expired_ns,
            counted_from_ns,
        }) => (
            format!(
                "process {}'s lease{} ran out at {}{} and process {} was granted the lock at {}",
                a.process,
                // Counted from a request well before the grant (an acquire that waited, a
                // library that names no lease: more than a tenth of the lease before it):
                // said, or the time reads too early. A round trip's gap is not worth a word.
                match counted_from_ns {
                    Some(from) if from + (expired_ns.saturating_sub(from) / 10) < a.start_ns => {
                        format!(", counted from its request at {},", secs(from))
                    }
                    _ => String::new(),
                },
                secs(expired_ns),
                // A lease the library did not name is the one lockpick asked for: a session
                // or watchdog the library keeps may have outlasted it, unseen here.
                match a.lease {
                    Some(l) if !l.named => format!(
                        " by the {} lockpick asked for (its library names no lease: a session or watchdog it keeps may have lasted longer, unseen here)",
                        secs(l.ms.saturating_mul(1_000_000))
                    ),
                    _ => String::new(),
                },
                b.process,
                secs(b.start_ns),
            ),
            // What kept the holder from renewing or letting go in time.
            over(faults, a.process, a.start_ns, b.start_ns),
        ),
        None => (String::new(), Vec::new()),
    };
    let late = late_write(a, b, expired_ns);
    let lead = match (lead.is_empty(), late.is_empty()) {
        (true, true) => String::new(),
        (false, true) => format!("{lead}: "),
        (true, false) => format!("{late}: "),
        (false, false) => format!("{lead}; {late}: "),
    };
    let active = if named.is_empty() {
        over_any(faults, &chain)
    } else {
        named
    };
    let mut writes = 0;
    for w in a.writes.iter().chain(&b.writes) {
        writes += 1;
        indices.push(w.invoke_index);
        indices.extend(w.done_index);
    }
    let summary = format!(
        "{lead}processes {} and {} both believed they held lock {:?} from {} to {} ({}): process {} ({}) since {} until it {} at {}, process {} ({}) since {} until it {} at {}; {} write(s) in the overlap; {}",
        a.process,
        b.process,
        lock,
        secs(start),
        secs(end),
        secs(end - start),
        a.process,
        token_phrase(a.token),
        secs(a.start_ns),
        a.end.phrase(),
        secs(a.end_ns),
        b.process,
        token_phrase(b.token),
        secs(b.start_ns),
        b.end.phrase(),
        secs(b.end_ns),
        writes,
        active_phrase(&active),
    );
    let mut f = Finding::new(FindingKind::DoubleHolder, summary).with_indices(indices);
    f.lock = Some(lock.to_string());
    // The two holders, as readers of a double holder take them (first, second); the
    // culprit's process is in the sentence and its lines in the evidence.
    f.processes = vec![a.process, b.process];
    f.tokens = a.token.into_iter().chain(b.token).collect();
    f.window = Some(TimeWindow {
        start_ns: start,
        end_ns: end,
    });
    f.faults = active.into_iter().cloned().collect();
    f
}
