//! The lock checker's result: verdict, violations and observations with their evidence, and
//! counts of what the history contained. Serializable, and printable as a terminal summary.

use super::params::Property;
use crate::faults::FaultWindow;
use crate::history::{EventKind, F};
use crate::verdict::Verdict;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    /// Two processes believed they held the same lock at the same time.
    DoubleHolder,
    /// The protected resource accepted a write with a token older than one it had seen.
    StaleWrite,
    /// The fence rejected a stale write: the fence worked (always an observation).
    RejectedStaleWrite,
    /// The final counter value is below the number of acknowledged increments.
    LostUpdate,
    /// The final counter value is above every increment that may have happened.
    PhantomIncrement,
    /// Clients wanted a free lock and nobody got it for a long fault-free stretch.
    Deadlock,
    /// One process was the only one granted (or holding) a lock for a long fault-free
    /// stretch while others asked for it: they were locked out.
    Lockout,
    /// The server's record of a holder's lock was lost (expired, deleted, overwritten, its
    /// node reset) while the holder went on believing it held it, and its library never told
    /// it (an observation: what it did meanwhile is judged by the other checks).
    SilentLoss,
    /// The server's record of a holder's lock expired or was deleted, and the holder's
    /// renewal set the same value again as if nothing had happened, unannounced (an
    /// observation).
    SilentRetake,
}

/// What a kind of finding is when it is found: what makes a run unsafe, what makes it stuck,
/// or something worth knowing that judges nothing by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingClass {
    /// A violation of safety: the verdict is invalid (a double holder only under the
    /// `exclusive` property; under `fenced` it is an observation).
    Safety,
    /// A violation of liveness: the run is stuck, not unsafe.
    Liveness,
    /// Never a violation, whatever the property: listed among the observations and never
    /// counted by the verdict. What it shows (the fence at work, a server that lost a
    /// holder's record unannounced) matters through what the other checks find beside it.
    Observation,
}

impl FindingKind {
    /// What the finding is: a safety or a liveness violation, or an observation.
    pub fn class(self) -> FindingClass {
        match self {
            FindingKind::DoubleHolder
            | FindingKind::StaleWrite
            | FindingKind::LostUpdate
            | FindingKind::PhantomIncrement => FindingClass::Safety,
            FindingKind::Deadlock | FindingKind::Lockout => FindingClass::Liveness,
            FindingKind::RejectedStaleWrite
            | FindingKind::SilentLoss
            | FindingKind::SilentRetake => FindingClass::Observation,
        }
    }

    /// Whether the finding, as a violation, breaks safety. A deadlock or a lockout breaks
    /// liveness: the run is stuck, not unsafe; an observation is never a violation.
    pub fn is_safety(self) -> bool {
        self.class() == FindingClass::Safety
    }

    /// Whether the finding is always an observation, whatever the property.
    pub fn is_observation(self) -> bool {
        self.class() == FindingClass::Observation
    }

    /// The name as written in reports and printed.
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::DoubleHolder => "double-holder",
            FindingKind::StaleWrite => "stale-write",
            FindingKind::RejectedStaleWrite => "rejected-stale-write",
            FindingKind::LostUpdate => "lost-update",
            FindingKind::PhantomIncrement => "phantom-increment",
            FindingKind::Deadlock => "deadlock",
            FindingKind::Lockout => "lockout",
            FindingKind::SilentLoss => "silent-loss",
            FindingKind::SilentRetake => "silent-retake",
        }
    }
}

impl fmt::Display for FindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A stretch of run time in nanoseconds; `start_ns <= end_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeWindow {
    pub start_ns: u64,
    pub end_ns: u64,
}

/// One violation or observation and the evidence for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub kind: FindingKind,
    /// One sentence for a human, with processes, tokens and times.
    pub summary: String,
    /// The lock (or resource) concerned, when the finding is about one.
    pub lock: Option<String>,
    /// History indices that prove the finding, in ascending order.
    pub indices: Vec<u64>,
    /// Client processes involved, in the order the summary names them.
    pub processes: Vec<u64>,
    /// Fencing tokens involved, in the order the summary names them.
    pub tokens: Vec<u64>,
    /// When it happened (the overlap, the deadlock or lockout stretch, the two writes).
    pub window: Option<TimeWindow>,
    /// Faults active during `window` (or around the stale write).
    pub faults: Vec<FaultWindow>,
    /// How many: lost or phantom increments, a lockout's grants to the one process.
    pub count: Option<u64>,
    /// Lines of the server record (`server.jsonl` indices) that prove it, in ascending order:
    /// a silent loss's or re-take's record changes (absent for the other kinds).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_indices: Vec<u64>,
}

impl Finding {
    /// A finding with no evidence attached yet.
    pub(crate) fn new(kind: FindingKind, summary: String) -> Finding {
        Finding {
            kind,
            summary,
            lock: None,
            indices: Vec::new(),
            processes: Vec::new(),
            tokens: Vec::new(),
            window: None,
            faults: Vec::new(),
            count: None,
            server_indices: Vec::new(),
        }
    }

    /// Sets the evidence indices, sorted and without repeats.
    pub(crate) fn with_indices(mut self, mut indices: Vec<u64>) -> Finding {
        indices.sort_unstable();
        indices.dedup();
        self.indices = indices;
        self
    }
}

/// Findings of one kind, listing at most [`MAX_LISTED`] and counting the rest, so a badly
/// broken lock costs neither memory nor time for evidence nobody reads.
#[derive(Debug, Default)]
pub(crate) struct Capped {
    pub listed: Vec<Finding>,
    pub omitted: u64,
}

impl Capped {
    /// The first [`MAX_LISTED`] of `all`, counting the rest.
    pub fn of(mut all: Vec<Finding>) -> Capped {
        let omitted = all.len().saturating_sub(MAX_LISTED) as u64;
        all.truncate(MAX_LISTED);
        Capped {
            listed: all,
            omitted,
        }
    }

    /// Lists the finding `make` builds, or only counts it once the list is full.
    #[cfg(test)]
    pub fn push_with(&mut self, make: impl FnOnce() -> Finding) {
        if self.listed.len() < MAX_LISTED {
            self.listed.push(make());
        } else {
            self.omitted += 1;
        }
    }

    /// Counts `n` findings without building them.
    #[cfg(test)]
    pub fn count(&mut self, n: u64) {
        self.omitted += n;
    }

    #[cfg(test)]
    pub fn is_full(&self) -> bool {
        self.listed.len() >= MAX_LISTED
    }

    fn add(&mut self, c: Capped) {
        self.listed.extend(c.listed);
        self.omitted += c.omitted;
    }

    fn total(&self) -> u64 {
        self.listed.len() as u64 + self.omitted
    }
}

/// Everything the checks found, before it is judged against the property.
pub(crate) struct Found {
    pub doubles: Capped,
    pub accepted: Capped,
    /// Every other finding, one kind to a `Capped`, in the order they are listed: a
    /// violation or an observation as its kind's [`FindingClass`] says, whatever the property
    /// (rejected stale writes, lost updates, phantom increments, deadlocks, lockouts, silent
    /// losses and re-takes).
    pub others: Vec<Capped>,
    pub unknowns: Vec<String>,
    pub stats: LockStats,
    /// Counts per lock name, in lock order; `violations` is set by [`judge`].
    pub per_lock: Vec<LockCounts>,
    /// What the library told its holders, beside when they lost the lock.
    pub learned: Vec<super::Learned>,
    /// The server's record set beside the holders' beliefs, when one was given.
    pub server: Option<super::ServerView>,
}

/// Judges what the checks found against `property`: double holders are violations of an
/// exclusive lock and observations of a fenced one; every other finding is what its kind's
/// class says (accepted stale writes, lost updates, deadlocks and lockouts are violations;
/// rejected stale writes, silent losses and re-takes are observations); a history where no
/// acquire succeeded tested nothing.
pub(crate) fn judge(property: Property, found: Found) -> LockReport {
    let mut counts: Vec<KindCount> = Vec::new();
    let mut count = |c: &Capped| {
        // Every finding of one Capped has one kind; an empty one adds nothing.
        if let Some(first) = c.listed.first() {
            match counts.iter_mut().find(|k| k.kind == first.kind) {
                Some(k) => k.count += c.total(),
                None => counts.push(KindCount {
                    kind: first.kind,
                    count: c.total(),
                }),
            }
        }
    };
    if property == Property::Exclusive {
        count(&found.doubles);
    }
    count(&found.accepted);
    let observed = |c: &Capped| c.listed.first().is_some_and(|f| f.kind.is_observation());
    for c in found.others.iter().filter(|c| !observed(c)) {
        count(c);
    }
    let violation_counts = counts;
    let mut violations = Capped::default();
    let mut observations = Capped::default();
    let mut unknowns = found.unknowns;
    match property {
        Property::Exclusive => violations.add(found.doubles),
        Property::Fenced => {
            let mut absorbed = found.doubles;
            for f in &mut absorbed.listed {
                f.summary.push_str(" (lease expiry absorbed by the fence)");
            }
            observations.add(absorbed);
        }
    }
    violations.add(found.accepted);
    for c in found.others {
        if observed(&c) {
            observations.add(c);
        } else {
            violations.add(c);
        }
    }
    let mut per_lock = found.per_lock;
    for l in &mut per_lock {
        l.violations = l.stale_writes
            + l.deadlocks
            + l.lockouts
            + match property {
                Property::Exclusive => l.double_holders,
                Property::Fenced => 0,
            };
    }
    // Worst first, then busiest: the rows a reader of a many-lock run wants on top.
    per_lock.sort_by(|a, b| {
        (b.violations, b.ops)
            .cmp(&(a.violations, a.ops))
            .then_with(|| a.lock.cmp(&b.lock))
    });
    if found.stats.acquires_ok == 0 {
        unknowns.push("no acquire ever succeeded, so nothing was tested".to_string());
    }
    // A deadlock or a lockout is liveness: the run is stuck, not unsafe, unless a safety
    // violation was found too.
    let verdict = Verdict::merge_all([
        Verdict::merge_all(violation_counts.iter().map(|k| {
            if k.kind.is_safety() {
                Verdict::Invalid
            } else {
                Verdict::Stuck
            }
        })),
        if unknowns.is_empty() {
            Verdict::Valid
        } else {
            Verdict::Unknown
        },
    ]);
    LockReport {
        property,
        verdict,
        violations: violations.listed,
        observations: observations.listed,
        omitted_violations: violations.omitted,
        omitted_observations: observations.omitted,
        violation_counts,
        unknowns,
        stats: found.stats,
        omitted_learned: found.learned.len().saturating_sub(MAX_LISTED) as u64,
        learned: found.learned.into_iter().take(MAX_LISTED).collect(),
        per_lock,
        server: found.server,
    }
}

/// The error a fenced resource gives when it rejects a write.
pub(crate) const STALE_TOKEN: &str = "stale-token";

impl LockStats {
    /// Counts one client operation by what it did and how it ended (`None`: never).
    pub(crate) fn count(&mut self, f: F, outcome: Option<EventKind>, error: Option<&str>) {
        let counter = match (f, outcome) {
            (F::Acquire, Some(EventKind::Ok)) => &mut self.acquires_ok,
            (F::Acquire, Some(EventKind::Fail)) => &mut self.acquires_fail,
            (F::Acquire, _) => &mut self.acquires_info,
            (F::Release, Some(EventKind::Ok)) => &mut self.releases_ok,
            (F::Release, Some(EventKind::Fail)) => &mut self.releases_fail,
            (F::Release, _) => &mut self.releases_info,
            (F::Renew, Some(EventKind::Ok)) => &mut self.renews_ok,
            (F::Renew, Some(EventKind::Fail)) => &mut self.renews_fail,
            (F::Renew, _) => &mut self.renews_info,
            (F::Write, Some(EventKind::Ok)) => &mut self.writes_ok,
            (F::Write, Some(EventKind::Fail)) if error == Some(STALE_TOKEN) => {
                &mut self.writes_rejected
            }
            (F::Write, Some(EventKind::Fail)) => &mut self.writes_fail,
            (F::Write, _) => &mut self.writes_info,
            _ => return,
        };
        *counter += 1;
    }
}

/// Counts of what the history contained.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockStats {
    pub acquires_ok: u64,
    pub acquires_fail: u64,
    /// Acquires that ended in `info` or never completed.
    pub acquires_info: u64,
    pub releases_ok: u64,
    pub releases_fail: u64,
    pub releases_info: u64,
    pub renews_ok: u64,
    pub renews_fail: u64,
    pub renews_info: u64,
    pub writes_ok: u64,
    /// Writes the fence rejected (`fail` with error "stale-token").
    pub writes_rejected: u64,
    /// Writes that failed for another reason.
    pub writes_fail: u64,
    pub writes_info: u64,
    /// Most processes believing they held the same lock at one instant.
    pub max_concurrent_holders: u64,
    /// Distinct client processes in the history.
    pub processes: u64,
    /// Believed holding intervals found.
    pub holding_intervals: u64,
}

/// What one lock saw: its operations and the findings about it, counted before the report's
/// cap on listed findings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockCounts {
    pub lock: String,
    /// Client operations on this lock, completed or not.
    pub ops: u64,
    pub acquires_ok: u64,
    pub acquires_fail: u64,
    /// Acquires that ended in `info` or never completed.
    pub acquires_info: u64,
    pub writes_ok: u64,
    /// Pairs of overlapping holders.
    pub double_holders: u64,
    /// Writes the resource accepted with a stale token.
    pub stale_writes: u64,
    pub deadlocks: u64,
    /// Stretches in which one process alone was granted the lock while others asked (absent
    /// in results written before they were found).
    #[serde(default)]
    pub lockouts: u64,
    /// The findings above that violate the report's property.
    pub violations: u64,
}

impl LockCounts {
    /// Counts one operation on this lock by what it did and how it ended (`None`: never).
    pub(crate) fn count(&mut self, f: F, outcome: Option<EventKind>) {
        self.ops += 1;
        match (f, outcome) {
            (F::Acquire, Some(EventKind::Ok)) => self.acquires_ok += 1,
            (F::Acquire, Some(EventKind::Fail)) => self.acquires_fail += 1,
            (F::Acquire, _) => self.acquires_info += 1,
            (F::Write, Some(EventKind::Ok)) => self.writes_ok += 1,
            _ => {}
        }
    }
}

/// The result of [`check_locks`](super::check_locks).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockReport {
    pub property: Property,
    pub verdict: Verdict,
    /// What makes the verdict invalid (safety violations) or stuck (deadlocks, lockouts, see
    /// [`FindingKind::is_safety`]), at most [`MAX_LISTED`] per kind.
    pub violations: Vec<Finding>,
    /// Worth knowing but not a violation of `property`, at most [`MAX_LISTED`] per kind.
    pub observations: Vec<Finding>,
    /// Findings beyond [`MAX_LISTED`] per kind that were counted but not listed.
    pub omitted_violations: u64,
    pub omitted_observations: u64,
    /// How many violations of each kind there were, listed or not, in the order of the list
    /// (empty in results written before they were counted by kind).
    #[serde(default)]
    pub violation_counts: Vec<KindCount>,
    /// Why part of the check could not decide (makes the verdict at least unknown).
    pub unknowns: Vec<String>,
    pub stats: LockStats,
    /// Each lock's counts, most violations first, then most operations (the streaming
    /// checker's; empty in results written before it counted per lock).
    #[serde(default)]
    pub per_lock: Vec<LockCounts>,
    /// What the lock library told its holders, unasked (`notice` events of a protocol-2
    /// adapter), each beside when the history shows the lock was lost; at most
    /// [`MAX_LISTED`]. Information, not violations (empty in results written before them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub learned: Vec<super::Learned>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted_learned: u64,
    /// The server's own record of the locks set beside the holders' beliefs: which process's
    /// value each node held when, and what was not judged; present only when the run has a
    /// server record (`server.jsonl`). Its findings (silent losses and re-takes) are among the
    /// observations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<super::ServerView>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// How many findings of one kind there were.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindCount {
    pub kind: FindingKind,
    pub count: u64,
}

/// How many violations of each kind a terminal summary prints; the others are counted, and
/// results.json and report.html list them.
pub const PRINTED_PER_KIND: usize = 3;

impl LockReport {
    /// The violations as a terminal prints them: the first `per_kind` of each kind, then how
    /// many more of that kind there were; and whether any was left out.
    pub fn violation_lines(&self, per_kind: usize) -> (Vec<String>, bool) {
        let mut lines = Vec::new();
        let mut cut = false;
        let mut kinds: Vec<FindingKind> = Vec::new();
        for v in &self.violations {
            if !kinds.contains(&v.kind) {
                kinds.push(v.kind);
            }
        }
        for kind in kinds {
            let listed: Vec<&Finding> = self.violations.iter().filter(|v| v.kind == kind).collect();
            for v in listed.iter().take(per_kind) {
                // A deadlock or a lockout is liveness: printed as what makes the run stuck.
                let head = if kind.is_safety() {
                    "VIOLATION"
                } else {
                    "STUCK"
                };
                lines.push(format!("{head} {}: {}", v.kind, v.summary));
            }
            let total = self
                .violation_counts
                .iter()
                .find(|c| c.kind == kind)
                .map_or(listed.len() as u64, |c| c.count);
            let shown = listed.len().min(per_kind) as u64;
            if total > shown {
                cut = true;
                lines.push(format!(
                    "… and {} more {kind} ({total} in all)",
                    total - shown
                ));
            }
        }
        // Results written before violations were counted by kind.
        if self.violation_counts.is_empty() && self.omitted_violations > 0 {
            cut = true;
            lines.push(format!(
                "… and {} more violation(s)",
                self.omitted_violations
            ));
        }
        (lines, cut)
    }
}

/// How many findings of one kind a report lists; a broken lock can produce thousands and the
/// first few carry the story.
pub const MAX_LISTED: usize = 100;

impl fmt::Display for LockReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.stats;
        writeln!(
            f,
            "lock check ({}): {} — {} violation(s), {} observation(s); acquires {} ok / {} fail / {} info, writes {} ok / {} rejected / {} info, max {} concurrent holder(s), {} processes",
            self.property.name(),
            self.verdict,
            self.violations.len() as u64 + self.omitted_violations,
            self.observations.len() as u64 + self.omitted_observations,
            s.acquires_ok,
            s.acquires_fail,
            s.acquires_info,
            s.writes_ok,
            s.writes_rejected,
            s.writes_info,
            s.max_concurrent_holders,
            s.processes,
        )?;
        let (lines, cut) = self.violation_lines(PRINTED_PER_KIND);
        for line in lines {
            writeln!(f, "  {line}")?;
        }
        if cut {
            writeln!(
                f,
                "  (the first {PRINTED_PER_KIND} of each kind; the results and the report list more)"
            )?;
        }
        let mut by_kind: Vec<(FindingKind, usize)> = Vec::new();
        for o in &self.observations {
            match by_kind.iter_mut().find(|(k, _)| *k == o.kind) {
                Some((_, n)) => *n += 1,
                None => by_kind.push((o.kind, 1)),
            }
        }
        if !by_kind.is_empty() {
            let parts: Vec<String> = by_kind.iter().map(|(k, n)| format!("{n} {k}")).collect();
            let more = if self.omitted_observations > 0 {
                format!(" and {} more", self.omitted_observations)
            } else {
                String::new()
            };
            writeln!(f, "  observed: {}{more}", parts.join(", "))?;
        }
        for l in self.learned.iter().take(PRINTED_PER_KIND) {
            writeln!(f, "  TOLD: {}", l.summary)?;
        }
        let more =
            self.learned.len().saturating_sub(PRINTED_PER_KIND) as u64 + self.omitted_learned;
        if more > 0 {
            writeln!(
                f,
                "  … and {more} more notice(s) from the library (the report lists them)"
            )?;
        }
        if let Some(server) = &self.server {
            for line in server.lines() {
                writeln!(f, "  {line}")?;
            }
        }
        for u in &self.unknowns {
            writeln!(f, "  UNKNOWN: {u}")?;
        }
        Ok(())
    }
}
