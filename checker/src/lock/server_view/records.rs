//! The server record turned into intervals: for each node and key, which value it held from
//! when to when, and how that ended. A record's logical end is when the server stopped
//! holding it: a `deleted`, an overwrite or a `reset` where observed; an `expired` at
//! min(observed, last set or renewal + its `ttl_ms`), since Redis reports an expiry when it
//! reclaims the key, up to ~100 ms after the TTL ran out. A `set` over a record whose TTL had
//! already run out ends it as expired there, unreported. Each `set` is kept with the
//! processes whose acquire or renewal window was open when it was observed (for
//! [`super::attribute`]).

use super::inputs::{ServerInputs, Window};
use super::keys::{lock_of, KeyLock};
use super::{RecordEnd, WATCH_LAG_NS};
use crate::faults::secs;
use crate::history::F;
use crate::server_record::{RecordChange, ServerEvent};
use std::collections::{HashMap, HashSet};

/// How a record ended.
#[derive(Debug, Clone)]
pub(crate) struct End {
    /// When the server stopped holding it (see the module documentation).
    pub ns: u64,
    /// When the watcher saw what showed it.
    pub observed_ns: u64,
    /// The server record's line that showed it.
    pub index: u64,
    pub how: RecordEnd,
    /// The value that overwrote it; for a reset, what replaced the node's records, if said.
    pub by: Option<String>,
}

/// One value held by one key on one node.
#[derive(Debug, Clone)]
pub(crate) struct Interval {
    pub lock: u32,
    pub node: String,
    pub key: String,
    pub value: String,
    pub start_ns: u64,
    /// The `set` that began it.
    pub set_index: u64,
    /// The last `set` or `renewed` of it, and the TTL it then had.
    touched_ns: u64,
    ttl_ms: Option<u64>,
    /// `None`: still held when the record ends.
    pub end: Option<End>,
    /// The interval before it on the same node and key.
    pub after: Option<usize>,
}

impl Interval {
    /// When its TTL, counted from its last set or renewal, runs out.
    fn ttl_end(&self) -> Option<u64> {
        self.ttl_ms
            .map(|t| self.touched_ns.saturating_add(t.saturating_mul(1_000_000)))
    }

    /// Whether it holds its value at `t`.
    pub fn covers(&self, t: u64) -> bool {
        self.start_ns <= t && self.end.as_ref().is_none_or(|e| t < e.ns)
    }

    /// When it ended, or never.
    pub fn end_ns(&self) -> u64 {
        self.end.as_ref().map_or(u64::MAX, |e| e.ns)
    }
}

/// A `set` of a value, and the processes whose window of that lock was open then.
#[derive(Debug, Clone)]
pub(crate) struct SetAt {
    pub ns: u64,
    pub index: u64,
    pub node: String,
    pub candidates: Vec<u64>,
}

#[derive(Debug, Default)]
pub(crate) struct Records {
    pub intervals: Vec<Interval>,
    /// Per (lock, value), each `set` of it in order.
    pub sets: HashMap<(u32, String), Vec<SetAt>>,
    /// Keys that are no lock's record, said once each.
    pub notes: Vec<String>,
}

/// Per lock, its acquire and renewal windows by invocation, swept forward as the server
/// record's time goes on: the ones that may contain the present are `active`.
struct Sweep<'a> {
    windows: Vec<&'a Window>,
    next: usize,
    active: Vec<&'a Window>,
}

impl Sweep<'_> {
    /// The processes with a window open at `t` (from its invocation to its completion plus
    /// [`WATCH_LAG_NS`]; one that never completed is open to the end). `t` never decreases.
    fn at(&mut self, t: u64) -> Vec<u64> {
        while let Some(w) = self.windows.get(self.next).filter(|w| w.invoke_ns <= t) {
            self.active.push(w);
            self.next += 1;
        }
        let open = |w: &&Window| w.done.is_none_or(|d| t <= d.0.saturating_add(WATCH_LAG_NS));
        self.active.retain(open);
        let mut ps: Vec<u64> = self.active.iter().map(|w| w.process).collect();
        ps.sort_unstable();
        ps.dedup();
        ps
    }
}

pub(crate) fn records(events: &[ServerEvent], names: &[String], inputs: &ServerInputs) -> Records {
    let mut sweeps: HashMap<u32, Sweep<'_>> = HashMap::new();
    for w in &inputs.windows {
        debug_assert!(matches!(w.f, F::Acquire | F::Renew));
        sweeps
            .entry(w.lock)
            .or_insert_with(|| Sweep {
                windows: Vec::new(),
                next: 0,
                active: Vec::new(),
            })
            .windows
            .push(w);
    }
    for s in sweeps.values_mut() {
        s.windows.sort_by_key(|w| w.invoke_ns);
    }
    let mut out = Records::default();
    let mut keys: HashMap<&str, KeyLock> = HashMap::new();
    let mut said: HashSet<&str> = HashSet::new();
    // Per (node, key): its interval open now, and its last one.
    let mut open: HashMap<(&str, &str), usize> = HashMap::new();
    let mut last: HashMap<(&str, &str), usize> = HashMap::new();
    for e in events {
        let t = e.time_ns;
        if e.event == RecordChange::Reset {
            let mut on_node: Vec<((&str, &str), usize)> = open
                .iter()
                .filter(|((node, _), _)| *node == e.node)
                .map(|(slot, &i)| (*slot, i))
                .collect();
            on_node.sort_unstable_by_key(|(_, i)| *i);
            for (slot, i) in on_node {
                open.remove(&slot);
                let iv = &mut out.intervals[i];
                iv.end = Some(End {
                    ns: t.max(iv.start_ns),
                    observed_ns: t,
                    index: e.index,
                    how: RecordEnd::Reset,
                    // What replaced the node's records, when the watcher says (a failover).
                    by: e.value.clone(),
                });
            }
            continue;
        }
        let lock = match keys
            .entry(e.key.as_str())
            .or_insert_with(|| lock_of(&e.key, names))
        {
            KeyLock::Lock(id) => *id,
            KeyLock::None => {
                if said.insert(e.key.as_str()) {
                    out.notes.push(format!(
                        "key {:?} (on {}, server record #{}) names no lock of the history: not judged",
                        e.key, e.node, e.index
                    ));
                }
                continue;
            }
            KeyLock::Tie(a, b) => {
                if said.insert(e.key.as_str()) {
                    out.notes.push(format!(
                        "key {:?} (on {}, server record #{}) names locks {a:?} and {b:?} alike (the longest name wins, and they are as long): not judged",
                        e.key, e.node, e.index
                    ));
                }
                continue;
            }
        };
        let slot = (e.node.as_str(), e.key.as_str());
        let current = open.get(&slot).copied();
        let close = |iv: &mut Interval, ns: u64, how: RecordEnd, by: Option<String>| {
            iv.end = Some(End {
                ns: ns.max(iv.start_ns),
                observed_ns: t,
                index: e.index,
                how,
                by,
            });
        };
        match e.event {
            RecordChange::Set => {
                let value = e.value.clone().unwrap_or_default();
                if let Some(i) = current {
                    let iv = &mut out.intervals[i];
                    match iv.ttl_end().filter(|&x| x < t) {
                        Some(x) => close(iv, x, RecordEnd::Expired, None),
                        None if iv.value == value => {
                            // The same value set again over itself: it goes on, with the
                            // TTL this set gave it.
                            iv.touched_ns = t;
                            iv.ttl_ms = e.ttl_ms;
                            note_set(&mut out.sets, &mut sweeps, lock, &value, e);
                            continue;
                        }
                        None => close(iv, t, RecordEnd::Overwritten, Some(value.clone())),
                    }
                    open.remove(&slot);
                }
                note_set(&mut out.sets, &mut sweeps, lock, &value, e);
                let after = last.get(&slot).copied();
                last.insert(slot, out.intervals.len());
                open.insert(slot, out.intervals.len());
                out.intervals.push(Interval {
                    lock,
                    node: e.node.clone(),
                    key: e.key.clone(),
                    value,
                    start_ns: t,
                    set_index: e.index,
                    touched_ns: t,
                    ttl_ms: e.ttl_ms,
                    end: None,
                    after,
                });
            }
            RecordChange::Renewed => {
                // A renewal the server reports is one it made: the record was there, whatever
                // its last TTL said.
                if let Some(i) = current {
                    let iv = &mut out.intervals[i];
                    iv.touched_ns = t;
                    iv.ttl_ms = e.ttl_ms.or(iv.ttl_ms);
                }
            }
            RecordChange::Expired | RecordChange::Deleted => {
                if let Some(i) = current {
                    let iv = &mut out.intervals[i];
                    let (ns, how) = match e.event {
                        RecordChange::Expired => {
                            (iv.ttl_end().map_or(t, |x| x.min(t)), RecordEnd::Expired)
                        }
                        _ => (t, RecordEnd::Deleted),
                    };
                    close(iv, ns, how, None);
                    open.remove(&slot);
                }
            }
            RecordChange::Reset => unreachable!("handled above"),
        }
    }
    out
}

/// Keeps the `set` `e` of `value` on `lock`, with the processes whose window was open then.
fn note_set(
    sets: &mut HashMap<(u32, String), Vec<SetAt>>,
    sweeps: &mut HashMap<u32, Sweep<'_>>,
    lock: u32,
    value: &str,
    e: &ServerEvent,
) {
    let candidates = sweeps
        .get_mut(&lock)
        .map_or_else(Vec::new, |s| s.at(e.time_ns));
    sets.entry((lock, value.to_owned()))
        .or_default()
        .push(SetAt {
            ns: e.time_ns,
            index: e.index,
            node: e.node.clone(),
            candidates,
        });
}

/// How a record's end reads in a sentence: "it expired at 0.400 s (its TTL ran out; the
/// server reported it at 0.480 s, server record #4)"; `owner` names the overwriting value's
/// process.
pub(crate) fn end_phrase(end: &End, owner: &dyn Fn(&str) -> Option<u64>) -> String {
    let at = secs(end.ns);
    let seen = if end.observed_ns != end.ns {
        format!(
            "its TTL ran out then; the server showed it at {}, server record #{}",
            secs(end.observed_ns),
            end.index
        )
    } else {
        format!("server record #{}", end.index)
    };
    match end.how {
        RecordEnd::Expired => format!("it expired at {at} ({seen})"),
        RecordEnd::Deleted => format!("it was deleted at {at} ({seen})"),
        RecordEnd::Overwritten => {
            let by = match end.by.as_deref().and_then(owner) {
                Some(q) => format!("process {q}'s value"),
                None => format!(
                    "the value {:?}, attributed to no process",
                    end.by.as_deref().unwrap_or("")
                ),
            };
            format!("it was overwritten by {by} at {at} ({seen})")
        }
        RecordEnd::Reset => match end.by.as_deref() {
            Some(why) => format!("its node's records were replaced at {at} ({seen}): {why}"),
            None => format!("the node lost every record (reset) at {at} ({seen})"),
        },
    }
}
