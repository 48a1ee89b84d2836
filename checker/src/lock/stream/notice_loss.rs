//! Follows each process's last holding (its grant, lease end, writes, the next grant to
//! another process) so that a `notice` can be set beside when the lock was really lost
//! ([`crate::lock::Learned`]). Memory: one holding per process, plus the holdings a notice
//! is about, each with at most [`MAX_WRITES`] writes.

use crate::lock::notices::{ms, Learned};
use std::collections::HashMap;

/// Writes kept per holding: a holding writes a few times; a runaway one keeps its first.
const MAX_WRITES: usize = 1000;

#[derive(Debug, Clone)]
struct Hold {
    process: u64,
    lock: u32,
    token: Option<u64>,
    acquire_index: u64,
    /// End of its lease as the history shows it (time, line of the acquire or renewal that
    /// started it), when the library reported one.
    lease_end: Option<(u64, u64)>,
    /// The lease the grant reported, which a renewal without its own extends by.
    lease_ms: Option<u64>,
    /// The first grant of the same lock to another process after this one's.
    superseded: Option<(u64, u64, u64)>,
    released_ns: Option<u64>,
    /// Write invocations (time, line).
    writes: Vec<(u64, u64)>,
}

/// A notice, waiting for the end of the history (a later grant may show the loss).
#[derive(Debug)]
struct Pending {
    process: u64,
    event: String,
    index: u64,
    ns: u64,
    token: Option<u64>,
    reason: Option<String>,
    hold: Option<usize>,
}

#[derive(Debug, Default)]
pub(crate) struct Notices {
    holds: Vec<Option<Hold>>,
    /// Each process's current (last) holding, an index into `holds`.
    current: HashMap<u64, usize>,
    /// Holdings some notice is about: kept to the end.
    kept: Vec<usize>,
    pending: Vec<Pending>,
}

impl Notices {
    /// Process `p`'s acquire on `lock` (invoked at `invoke_ns`) returned ok.
    #[allow(clippy::too_many_arguments)]
    pub fn granted(
        &mut self,
        p: u64,
        lock: u32,
        token: Option<u64>,
        lease_ms: Option<u64>,
        invoke: (u64, u64),
        at: (u64, u64),
    ) {
        let live = self.current.values().chain(self.kept.iter());
        let others: Vec<usize> = live.copied().collect();
        for i in others {
            if let Some(h) = &mut self.holds[i] {
                if h.lock == lock && h.process != p && h.superseded.is_none() {
                    h.superseded = Some((at.0, at.1, p));
                }
            }
        }
        let hold = Hold {
            process: p,
            lock,
            token,
            acquire_index: at.1,
            lease_end: lease_ms.map(|l| {
                (
                    invoke.0.saturating_add(l.saturating_mul(1_000_000)),
                    invoke.1,
                )
            }),
            lease_ms,
            superseded: None,
            released_ns: None,
            writes: Vec::new(),
        };
        match self.current.get(&p).copied() {
            Some(i) if !self.kept.contains(&i) => self.holds[i] = Some(hold),
            _ => {
                self.holds.push(Some(hold));
                self.current.insert(p, self.holds.len() - 1);
            }
        }
    }

    fn hold_of(&mut self, p: u64) -> Option<&mut Hold> {
        let i = *self.current.get(&p)?;
        self.holds[i].as_mut()
    }

    /// `p` renewed its lease: invoked at `invoke`, for `lease_ms` (or the grant's).
    pub fn renewed(&mut self, p: u64, lease_ms: Option<u64>, invoke: (u64, u64)) {
        if let Some(h) = self.hold_of(p) {
            if h.released_ns.is_none() {
                if let Some(l) = lease_ms.or(h.lease_ms) {
                    h.lease_end = Some((
                        invoke.0.saturating_add(l.saturating_mul(1_000_000)),
                        invoke.1,
                    ));
                }
            }
        }
    }

    pub fn wrote(&mut self, p: u64, at: (u64, u64)) {
        if let Some(h) = self.hold_of(p) {
            if h.released_ns.is_none() && h.writes.len() < MAX_WRITES {
                h.writes.push(at);
            }
        }
    }

    pub fn released(&mut self, p: u64, ns: u64) {
        if let Some(h) = self.hold_of(p) {
            h.released_ns.get_or_insert(ns);
        }
    }

    /// The library told process `p` `event` at `at`.
    pub fn notice(
        &mut self,
        p: u64,
        event: &str,
        token: Option<u64>,
        reason: Option<&str>,
        at: (u64, u64),
    ) {
        let hold = self.current.get(&p).copied();
        if let Some(i) = hold {
            if !self.kept.contains(&i) {
                self.kept.push(i);
            }
        }
        self.pending.push(Pending {
            process: p,
            event: event.to_owned(),
            index: at.1,
            ns: at.0,
            token,
            reason: reason.map(str::to_owned),
            hold,
        });
    }

    /// Every notice, in history order, with the loss it is about; `names` are the lock names.
    pub fn finish(self, names: &[String]) -> Vec<Learned> {
        let holds = self.holds;
        self.pending
            .into_iter()
            .map(|n| {
                let hold = n.hold.and_then(|i| holds.get(i)?.as_ref());
                describe(n, hold, names)
            })
            .collect()
    }
}

fn describe(n: Pending, hold: Option<&Hold>, names: &[String]) -> Learned {
    let secs = |ns: u64| format!("{:.3} s", ns as f64 / 1e9);
    let Some(h) = hold else {
        let summary = format!(
            "process {} was told `{}` at {} (#{}) while it held no lock",
            n.process,
            n.event,
            secs(n.ns),
            n.index
        );
        return Learned { summary, ..told(n) };
    };
    let lease = h
        .lease_end
        .map(|(ns, i)| (ns, i, "lease ran out".to_owned()));
    let grant = h
        .superseded
        .map(|(ns, i, q)| (ns, i, format!("granted to process {q}")));
    let lost = match (lease, grant) {
        (Some(a), Some(b)) => Some(if b.0 < a.0 { b } else { a }),
        (a, b) => a.or(b),
    };
    let lock = names.get(h.lock as usize).cloned().unwrap_or_default();
    // Released before the notice, and before any loss the history shows: the notice is about
    // nothing the process still believed it held.
    if let Some(r) = h.released_ns.filter(|r| *r <= n.ns) {
        if lost.as_ref().is_none_or(|l| r <= l.0) {
            let summary = format!(
                "process {} was told `{}` at {} (#{}) while it held no lock (it invoked the release of lock {lock:?}, acquired #{}, at {})",
                n.process,
                n.event,
                secs(n.ns),
                n.index,
                h.acquire_index,
                secs(r)
            );
            return Learned {
                released_before: true,
                summary,
                ..told_of(n, h, lock)
            };
        }
    }
    let delay_ns = lost.as_ref().map(|l| n.ns as i64 - l.0 as i64);
    let writes_between: Vec<u64> = match &lost {
        Some((lost_ns, _, _)) => h
            .writes
            .iter()
            .filter(|(ns, _)| *ns >= *lost_ns && *ns <= n.ns)
            .map(|(_, i)| *i)
            .collect(),
        None => Vec::new(),
    };
    let released_before = match (&lost, h.released_ns) {
        (Some((lost_ns, _, _)), Some(r)) => r <= *lost_ns,
        _ => false,
    };
    let told = format!(
        "process {} (lock {lock:?}, acquired #{}) was told `{}` at {} (#{})",
        n.process,
        h.acquire_index,
        n.event,
        secs(n.ns),
        n.index
    );
    let summary = match (&lost, delay_ns) {
        (Some((lost_ns, i, by)), Some(d)) => {
            let when = if d >= 0 {
                format!("{} ms after", ms(d))
            } else {
                format!("{} ms before", ms(-d))
            };
            let writes = if writes_between.is_empty() {
                "no write in between".to_owned()
            } else {
                format!(
                    "{} write(s) in between ({})",
                    writes_between.len(),
                    writes_between
                        .iter()
                        .map(|i| format!("#{i}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            let released = if released_before {
                "; it had already invoked release"
            } else {
                ""
            };
            format!(
                "{told}, {when} it lost the lock at {} ({by}, #{i}); {writes}{released}",
                secs(*lost_ns)
            )
        }
        _ => format!("{told}; the history shows no lease end and no other grant: when it was lost is not shown"),
    };
    Learned {
        lost_ns: lost.as_ref().map(|l| l.0),
        lost_index: lost.as_ref().map(|l| l.1),
        lost_by: lost.map(|l| l.2),
        delay_ns,
        writes_between,
        released_before,
        summary,
        ..told_of(n, h, lock)
    }
}

/// What a notice says by itself: who was told what, about which grant; no loss set beside it.
fn told_of(n: Pending, h: &Hold, lock: String) -> Learned {
    let token = n.token.or(h.token);
    Learned {
        lock: Some(lock),
        token,
        acquire_index: Some(h.acquire_index),
        ..told(n)
    }
}

/// What a notice says with no holding to tie it to: who was told what, and when.
fn told(n: Pending) -> Learned {
    Learned {
        process: n.process,
        event: n.event,
        index: n.index,
        learned_ns: n.ns,
        lock: None,
        token: n.token,
        reason: n.reason,
        acquire_index: None,
        lost_ns: None,
        lost_index: None,
        lost_by: None,
        delay_ns: None,
        writes_between: Vec::new(),
        released_before: false,
        summary: String::new(),
    }
}
