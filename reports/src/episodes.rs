//! Violations close in time, told as one story: the report zooms on each episode, lists its
//! violations together with the pairs of processes they involve, and the card under the
//! verdict tells the first one in a sentence.

use lockpick_checker::faults::secs;
use lockpick_checker::lock::Finding;
use serde::Serialize;
use std::collections::BTreeSet;

/// Violations close in time, zoomed on together: their windows with room on both sides,
/// merged where they overlap.
#[derive(Debug)]
pub(crate) struct Episode {
    pub from_ns: u64,
    pub to_ns: u64,
    /// Positions of the violations in the report's list.
    pub members: Vec<usize>,
}

pub(crate) fn episodes(violations: &[Finding], end_ns: u64) -> Vec<Episode> {
    let mut padded: Vec<(u64, u64, usize)> = violations
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let w = f.window?;
            let pad = ((w.end_ns - w.start_ns) / 2).max(300_000_000);
            Some((
                w.start_ns.saturating_sub(pad),
                (w.end_ns + pad).min(end_ns.max(w.end_ns)),
                i,
            ))
        })
        .collect();
    padded.sort_unstable();
    let mut out: Vec<Episode> = Vec::new();
    for (from, to, i) in padded {
        match out.last_mut() {
            Some(ep) if from <= ep.to_ns => {
                ep.to_ns = ep.to_ns.max(to);
                ep.members.push(i);
            }
            _ => out.push(Episode {
                from_ns: from,
                to_ns: to,
                members: vec![i],
            }),
        }
    }
    for ep in &mut out {
        ep.members.sort_unstable();
    }
    out
}

/// One group of the report's violation list: an episode, or the violations with no time.
#[derive(Debug, Serialize)]
pub(crate) struct EpisodeGroup {
    pub id: String,
    pub title: String,
    /// The pairs of processes its violations involve (`2 & 1, 2 & 3`), empty when none does.
    pub pairs: String,
    /// Positions of its violations in the report's list.
    pub members: Vec<usize>,
}

/// The violation list's groups: each episode in time order, then the violations that have no
/// window (a lost update is about the whole run), so that every violation is in one group.
pub(crate) fn episode_groups(violations: &[Finding], episodes: &[Episode]) -> Vec<EpisodeGroup> {
    let n = episodes.len();
    let mut out: Vec<EpisodeGroup> = episodes
        .iter()
        .enumerate()
        .map(|(k, ep)| EpisodeGroup {
            id: format!("episode-{}", k + 1),
            title: format!(
                "Episode {} of {n}: {} between {} and {}",
                k + 1,
                counted_kinds(violations, &ep.members),
                secs(ep.from_ns),
                secs(ep.to_ns)
            ),
            pairs: pairs(violations, &ep.members),
            members: ep.members.clone(),
        })
        .collect();
    let timeless: Vec<usize> = (0..violations.len())
        .filter(|&i| violations[i].window.is_none())
        .collect();
    if !timeless.is_empty() {
        out.push(EpisodeGroup {
            id: "episode-whole-run".to_owned(),
            title: format!(
                "Over the whole run: {}",
                counted_kinds(violations, &timeless)
            ),
            pairs: pairs(violations, &timeless),
            members: timeless,
        });
    }
    out
}

/// `3 double-holder, 1 stale-write`, in the order the kinds first appear.
fn counted_kinds(violations: &[Finding], members: &[usize]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for &m in members {
        let kind = violations[m].kind.name();
        match counts.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, c)) => *c += 1,
            None => counts.push((kind, 1)),
        }
    }
    let parts: Vec<String> = counts.iter().map(|(k, c)| format!("{c} {k}")).collect();
    parts.join(", ")
}

/// The distinct pairs of processes the violations name (their first two), in order.
fn pairs(violations: &[Finding], members: &[usize]) -> String {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for &m in members {
        if let [a, b, ..] = violations[m].processes[..] {
            if seen.insert((a, b)) {
                out.push(format!("{a} & {b}"));
            }
        }
    }
    out.join(", ")
}
