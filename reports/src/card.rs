//! The "what happened" card under a run report's verdict: the first episode in one sentence
//! (who held, when its lease ran out, who was granted, the fault over it), the scenario's
//! description, the library that ran, and the command that repeats the run.

use crate::episodes::Episode;
use crate::view::{Hold, RunView};
use lockpick_checker::faults::secs;
use lockpick_checker::lock::{Finding, FindingKind};
use lockpick_checker::results::RunResults;
use serde::Serialize;

#[derive(Debug, Serialize)]
pub(crate) struct Card {
    /// The first episode in one sentence; none for a run without violations.
    pub what: Option<String>,
    /// What follows it: the episode's other violations and the episodes after it.
    pub more: Option<String>,
    pub description: Option<String>,
    pub library: Option<String>,
    pub reproduce: String,
}

pub(crate) fn card(results: &RunResults, view: &RunView, episodes: &[Episode]) -> Card {
    let violations = &results.lock.violations;
    // The first in time of the first episode, else (a violation with no time) the first.
    let first = episodes
        .first()
        .and_then(|ep| {
            ep.members
                .iter()
                .min_by_key(|&&m| violations[m].window.map(|w| w.start_ns))
        })
        .map(|&m| &violations[m])
        .or_else(|| violations.first());
    let more = episodes.first().map(|ep| {
        let others = ep.members.len() - 1;
        let later = episodes.len() - 1;
        let mut parts = Vec::new();
        if others > 0 {
            parts.push(format!("{others} more violation(s) in this episode"));
        }
        if later > 0 {
            parts.push(format!("{later} more episode(s) after it"));
        }
        parts.join("; ")
    });
    Card {
        what: first.map(|f| sentence(f, view)),
        more: more.filter(|m| !m.is_empty()),
        description: results.description.clone(),
        library: results.library.clone(),
        reproduce: results.reproduce.clone(),
    }
}

/// One violation told in a sentence; a double holder from the holds the view drew.
fn sentence(f: &Finding, view: &RunView) -> String {
    let told = match f.kind {
        FindingKind::DoubleHolder => double_holder(f, view),
        FindingKind::StaleWrite
        | FindingKind::RejectedStaleWrite
        | FindingKind::LostUpdate
        | FindingKind::PhantomIncrement
        | FindingKind::Deadlock
        | FindingKind::Lockout
        | FindingKind::SilentLoss
        | FindingKind::SilentRetake => None,
    };
    // The checker's summary names the faults itself after this; the sentence says them once.
    let told = told.unwrap_or_else(|| {
        f.summary
            .split("; faults active")
            .next()
            .unwrap_or_default()
            .to_owned()
    });
    let faults: Vec<String> = f.faults.iter().map(|w| w.describe()).collect();
    let over = if faults.is_empty() {
        String::new()
    } else {
        format!(", during the {}", faults.join(" and the "))
    };
    let mut s = format!("{told}{over}.");
    if let Some(c) = s.get(..1) {
        s.replace_range(..1, &c.to_uppercase());
    }
    s
}

/// "process 2 held the lock from 0.768 s (token 92) and its lease ran out at 1.068 s;
/// process 1 was granted it at 1.111 s (token 93) while process 2 still believed it held it"
fn double_holder(f: &Finding, view: &RunView) -> Option<String> {
    let [a, b, ..] = f.processes[..] else {
        return None;
    };
    let w = f.window?;
    let held = hold_at(view, a, w.start_ns)?;
    let granted = hold_at(view, b, w.start_ns).map_or(w.start_ns, |h| h.start_ns);
    let token = |t: Option<u64>| t.map(|t| format!(" (token {t})")).unwrap_or_default();
    let lease = match held.lease_end_ns {
        Some(end) if end <= granted => format!(
            " and its lease{} ran out at {}",
            counted_from(held),
            secs(end)
        ),
        Some(end) => format!(", its lease running until {}", secs(end)),
        None => String::new(),
    };
    Some(format!(
        "process {a} held the lock from {}{}{lease}; process {b} was granted it at {}{} while process {a} still believed it held it",
        secs(held.start_ns),
        token(held.token),
        secs(granted),
        token(f.tokens.get(1).copied()),
    ))
}

/// ", counted from its request at T," when a hold's lease was counted from a request well
/// before its grant (more than a tenth of the lease before it: an acquire that waited, a
/// library that names no lease), which makes its end read early; else nothing (as the
/// checker's sentence).
pub(crate) fn counted_from(h: &Hold) -> String {
    let lease_ns = |from: u64| h.lease_end_ns.unwrap_or(from).saturating_sub(from);
    match h.lease_from_ns {
        Some(from) if from + lease_ns(from) / 10 < h.start_ns => {
            format!(", counted from its request at {},", secs(from))
        }
        _ => String::new(),
    }
}

/// The hold of `process` that covers `at_ns`.
fn hold_at(view: &RunView, process: u64, at_ns: u64) -> Option<&Hold> {
    let lane = view.lanes.iter().find(|l| l.process == process)?;
    lane.holds
        .iter()
        .find(|h| h.start_ns <= at_ns && at_ns <= h.end_ns)
}
