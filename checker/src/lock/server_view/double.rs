//! What the server's own record says of a double holder's earlier holder, when the run has
//! one: on each node, whether that holder's value was gone before the later grant (expired,
//! deleted, overwritten, lost in a restart) and when, or was still held. It tells a lease that
//! really ran out on the server from a key another client removed, and a library that kept
//! its holder's session alive from one that did not, where the history alone can only say
//! what the clients believed.

use super::{Ownership, RecordEnd, ServerView, WATCH_LAG_NS};
use crate::faults::secs;

/// A holder as the clause needs it: its process, and when it asked (the earlier holder) or
/// was granted (the later).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Holder {
    pub process: u64,
    pub at_ns: u64,
}

/// The clause for `a` (the earlier holder of `lock`, when it asked) and `b` (the later, when
/// it was granted), e.g. "the server's
/// record of process 0's value: expired on n1 at 1.312 s"; `None` when the record holds no
/// value of `a`'s from its acquire to `b`'s grant (no record, none attributed, or past the
/// records a view lists).
/// With it, the server record lines it rests on (each value's set and end), for the evidence.
pub(crate) fn clause(
    view: &ServerView,
    lock: &str,
    a: Holder,
    b: Holder,
) -> Option<(String, Vec<u64>)> {
    let lv = view.locks.iter().find(|l| l.lock == lock)?;
    // `a`'s values that lived at some moment from its request to `b`'s grant (a value is set
    // before its acquire's reply, seen by the watcher a little after).
    let grant = b.at_ns;
    let mine: Vec<&Ownership> = (lv.records.iter())
        .filter(|r| r.process == Some(a.process))
        .filter(|r| r.start_ns <= grant.saturating_add(WATCH_LAG_NS))
        .filter(|r| r.end_ns.is_none_or(|e| e >= a.at_ns))
        .collect();
    // Per node, the latest of them.
    let mut nodes: Vec<&str> = mine.iter().map(|r| r.node.as_str()).collect();
    nodes.sort_unstable();
    nodes.dedup();
    let mut lines = Vec::new();
    let parts: Vec<String> = nodes
        .iter()
        .filter_map(|n| {
            let r = (mine.iter())
                .filter(|r| r.node == *n)
                .max_by_key(|r| r.start_ns)?;
            lines.push(r.set_index);
            Some(match (r.end_ns, r.ended) {
                (Some(end), Some(how)) if end <= grant => {
                    lines.extend(r.end_index);
                    format!("{} on {n} at {}", ended(how, r), secs(end))
                }
                _ => format!("still held on {n}"),
            })
        })
        .collect();
    if parts.is_empty() {
        return None;
    }
    lines.sort_unstable();
    let said = format!(
        "the server's record of process {}'s value at process {}'s grant: {}",
        a.process,
        b.process,
        parts.join(", ")
    );
    Some((said, lines))
}

/// How a record ended, in words.
fn ended(how: RecordEnd, r: &Ownership) -> String {
    match how {
        RecordEnd::Expired => "expired".to_owned(),
        RecordEnd::Deleted => "deleted".to_owned(),
        RecordEnd::Overwritten => match r.overwritten_by {
            Some(p) => format!("overwritten by process {p}'s"),
            None => "overwritten".to_owned(),
        },
        RecordEnd::Reset => "lost when its node restarted".to_owned(),
    }
}
