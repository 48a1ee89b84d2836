//! The server's own record of each lock set beside the holders' beliefs (issue 33 item 4):
//! which process's value each node held when ([`Ownership`]), and two observations, a
//! **silent loss** (a holder whose record the server lost while it went on believing, and
//! whom its library never told) and a **silent re-take** (a record that went and was set
//! again with the holder's same value, as if nothing had happened). Neither is a violation:
//! what the holder did meanwhile is judged by the double-holder and stale-write checks.
//!
//! The rules, each in its module: which lock a key is a record of ([`keys`]: the longest
//! lock name the key contains); how records begin and end ([`records`]: an expiry at
//! min(observed, last set or renewal + TTL)); whose a value is ([`attribute`]: the holder
//! value the history names, else exactly one process's acquire or renewal open at its first
//! set, never a guess); and the findings ([`silent`]: below a majority of the lock's nodes
//! while the holding goes on past [`SILENCE_TOLERANCE_NS`], unwarned).
//!
//! Not streaming: it keeps the whole server record, and of the history each acquire's and
//! renewal's window, each holding with its writes, and each notice ([`inputs`]), so memory
//! grows with the server record and the history's operations; it runs only when a run has a
//! server record.

mod attribute;
pub(crate) mod double;
mod inputs;
mod keys;
mod records;
mod sentence;
mod silent;

pub(crate) use inputs::ServerInputs;

use crate::faults::FaultWindow;
use crate::lock::report::{Finding, MAX_LISTED};
use crate::server_record::ServerEvent;
use attribute::Owner;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// How long after an acquire's or renewal's reply the watcher may see the record it set and
/// the set still count inside that operation's window: the watcher hears of a change through
/// its own connection, a little after the client does on a busy machine. A wider window only
/// makes more values unattributed, never another process's ([`attribute`]).
pub const WATCH_LAG_NS: u64 = 20_000_000;

/// How far a holding must go on past the loss of its record for the loss to be one the
/// holder lived through: a release invoked within 1 ms of its record's expiry is a holder
/// letting go as its lease ends, not one that believed on.
pub const SILENCE_TOLERANCE_NS: u64 = 1_000_000;

/// Records listed per lock in a view; the rest are counted.
pub const MAX_RECORDS: usize = 2000;

/// How a server-side record ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecordEnd {
    /// Its TTL ran out or its session expired.
    Expired,
    /// A client's command removed it.
    Deleted,
    /// Another value was set over it.
    Overwritten,
    /// Its node lost every record.
    Reset,
}

/// The server's record beside the holders' beliefs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerView {
    /// Events the server record had.
    pub events: u64,
    /// Each lock the server record holds records of, by name.
    pub locks: Vec<LockServerView>,
    /// What could not be judged, and why: keys that are no lock's, values attributed to no
    /// process, holdings whose value the record never showed on a majority. At most
    /// [`MAX_LISTED`].
    pub notes: Vec<String>,
    #[serde(default)]
    pub omitted_notes: u64,
}

/// One lock as its server recorded it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockServerView {
    pub lock: String,
    /// The nodes that held a record of it, and how many of them are a majority.
    pub nodes: Vec<String>,
    pub majority: u64,
    /// Holdings whose process's value was on a majority at some moment of the holding
    /// (whether it was lost silently could be judged), and those whose was not.
    pub holdings_judged: u64,
    pub holdings_not_judged: u64,
    pub silent_losses: u64,
    pub silent_retakes: u64,
    /// Values attributed to no process (the notes say why).
    pub unattributed_values: u64,
    /// Which value each node held from when to when, by start; at most [`MAX_RECORDS`].
    pub records: Vec<Ownership>,
    #[serde(default)]
    pub omitted_records: u64,
}

/// One value held by one record on one node, and whose it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ownership {
    pub node: String,
    pub key: String,
    pub value: String,
    /// The process the value is attributed to; `None`: no one's (see the notes).
    pub process: Option<u64>,
    /// From its `set` (time, server record line).
    pub start_ns: u64,
    pub set_index: u64,
    /// When the server stopped holding it (an expiry's TTL end if before it was reported);
    /// `None`: still held when the record ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<RecordEnd>,
    /// When the watcher saw its end, and on which server record line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_end_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_index: Option<u64>,
    /// Overwritten: the process whose value took its place, when it is attributed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overwritten_by: Option<u64>,
}

/// The view and its findings, each list in lock-name and time order.
pub(crate) struct Judged {
    pub view: ServerView,
    pub losses: Vec<Finding>,
    pub retakes: Vec<Finding>,
}

/// Sets the server record `events` beside what the history gave `inputs`; `names` are the
/// lock names by id.
pub(crate) fn judge(
    events: &[ServerEvent],
    inputs: &ServerInputs,
    names: &[String],
    faults: &[FaultWindow],
) -> Judged {
    let recs = records::records(events, names, inputs);
    let mut notes = recs.notes.clone();
    let mut owners: HashMap<(u32, String), Owner> = HashMap::new();
    let mut by_first: Vec<(&(u32, String), &Vec<records::SetAt>)> = recs.sets.iter().collect();
    by_first.sort_by_key(|(_, sets)| sets.first().map_or(0, |s| s.index));
    let mut unattributed: HashMap<u32, u64> = HashMap::new();
    for (key, sets) in by_first {
        let o = attribute::owner(key.0, &key.1, sets, inputs);
        if let Owner::Unknown(why) = &o {
            *unattributed.entry(key.0).or_default() += 1;
            notes.push(format!(
                "lock {:?}: the value {:?} is attributed to no process: {why}",
                names[key.0 as usize], key.1
            ));
        }
        owners.insert(key.clone(), o);
    }
    let mut locks: Vec<u32> = recs.intervals.iter().map(|iv| iv.lock).collect();
    locks.sort_unstable_by(|a, b| names[*a as usize].cmp(&names[*b as usize]));
    locks.dedup();
    let mut view = ServerView {
        events: events.len() as u64,
        ..ServerView::default()
    };
    let (mut losses, mut retakes) = (Vec::new(), Vec::new());
    for lock in locks {
        let name = names[lock as usize].as_str();
        let owner = |v: &str| owners.get(&(lock, v.to_owned())).and_then(Owner::process);
        let owner_of = |iv: &records::Interval| owner(&iv.value);
        let found = silent::find(lock, &recs.intervals, &owner_of, inputs);
        let of_lock: Vec<&records::Interval> =
            recs.intervals.iter().filter(|iv| iv.lock == lock).collect();
        let mut nodes: Vec<String> = of_lock.iter().map(|iv| iv.node.clone()).collect();
        nodes.sort_unstable();
        nodes.dedup();
        if found.not_judged > 0 {
            notes.push(format!(
                "lock {name:?}: {} of {} holding(s) not judged: their process's value was never on a majority of the lock's nodes in the server record (a value attributed to no process, or a record the watcher did not see)",
                found.not_judged,
                found.judged + found.not_judged
            ));
        }
        let records: Vec<Ownership> = of_lock
            .iter()
            .take(MAX_RECORDS)
            .map(|iv| Ownership {
                node: iv.node.clone(),
                key: iv.key.clone(),
                value: iv.value.clone(),
                process: owner(&iv.value),
                start_ns: iv.start_ns,
                set_index: iv.set_index,
                end_ns: iv.end.as_ref().map(|e| e.ns),
                ended: iv.end.as_ref().map(|e| e.how),
                observed_end_ns: iv.end.as_ref().map(|e| e.observed_ns),
                end_index: iv.end.as_ref().map(|e| e.index),
                overwritten_by: iv
                    .end
                    .as_ref()
                    .and_then(|e| e.by.as_deref())
                    .and_then(owner),
            })
            .collect();
        view.locks.push(LockServerView {
            lock: name.to_owned(),
            majority: silent::majority(nodes.len()) as u64,
            nodes,
            holdings_judged: found.judged,
            holdings_not_judged: found.not_judged,
            silent_losses: found.losses.len() as u64,
            silent_retakes: found.retakes.len() as u64,
            unattributed_values: unattributed.get(&lock).copied().unwrap_or(0),
            omitted_records: of_lock.len().saturating_sub(MAX_RECORDS) as u64,
            records,
        });
        let mut ls: Vec<_> = found.losses.iter().collect();
        ls.sort_by_key(|l| (l.at_ns, l.held.acquire_index));
        losses.extend(ls.iter().map(|l| sentence::loss(name, l, &owner, faults)));
        retakes.extend(
            found
                .retakes
                .iter()
                .map(|r| sentence::retake(name, r, &owner, faults)),
        );
    }
    view.omitted_notes = notes.len().saturating_sub(MAX_LISTED) as u64;
    notes.truncate(MAX_LISTED);
    view.notes = notes;
    Judged {
        view,
        losses,
        retakes,
    }
}

impl ServerView {
    /// One line per lock for a terminal: its nodes, the holdings judged, what was found.
    pub fn lines(&self) -> Vec<String> {
        self.locks
            .iter()
            .map(|l| {
                format!(
                    "server record, lock {:?}: {} node(s) ({} a majority), {} holding(s) judged, {} not; {} silent loss(es), {} silent re-take(s), {} value(s) attributed to no process",
                    l.lock,
                    l.nodes.len(),
                    l.majority,
                    l.holdings_judged,
                    l.holdings_not_judged,
                    l.silent_losses,
                    l.silent_retakes,
                    l.unattributed_values
                )
            })
            .collect()
    }
}
