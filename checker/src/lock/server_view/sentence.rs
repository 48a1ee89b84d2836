//! One sentence and the evidence for each silent loss and re-take: the process, the lock, the
//! nodes and the server-side times, how the record went, how long the holder went on
//! believing and what it wrote meanwhile, and the notice it never got.

use super::records::{end_phrase, Interval};
use super::silent::{Loss, Retake};
use crate::faults::{active_during, secs, FaultWindow};
use crate::lock::report::{Finding, FindingKind, TimeWindow};
use crate::lock::stream::describe::{active_phrase, token_phrase};

const UNTOLD: &str = "its library never told it (no `lost` or `suspended` notice)";

fn indices(list: &[u64]) -> String {
    let v: Vec<String> = list.iter().map(|i| format!("#{i}")).collect();
    v.join(", ")
}

/// "on n1 it expired at 0.400 s (…)", one node's part of a loss.
fn node_part(iv: &Interval, owner: &dyn Fn(&str) -> Option<u64>) -> String {
    let end = iv.end.as_ref().expect("a lost record ended");
    format!(
        "on {} ({:?}, set at {}, server record #{}) {}",
        iv.node,
        iv.key,
        secs(iv.start_ns),
        iv.set_index,
        end_phrase(end, owner)
    )
}

pub(crate) fn loss(
    lock: &str,
    l: &Loss<'_>,
    owner: &dyn Fn(&str) -> Option<u64>,
    faults: &[FaultWindow],
) -> Finding {
    let h = l.held;
    let p = h.process;
    let parts: Vec<String> = l.lost.iter().map(|iv| node_part(iv, owner)).collect();
    let where_ = if l.nodes == 1 {
        format!("the server lost its record of it: {}", parts.join("; "))
    } else {
        format!(
            "its value was on fewer than {} of the lock's {} nodes from {}: {}",
            l.majority,
            l.nodes,
            secs(l.at_ns),
            parts.join("; ")
        )
    };
    let from = l.at_ns.max(h.start_ns);
    let writes: Vec<u64> = h
        .writes
        .iter()
        .filter(|(ns, _)| *ns >= l.at_ns && *ns <= l.until_ns)
        .map(|(_, i)| *i)
        .collect();
    let wrote = if writes.is_empty() {
        "made no write meanwhile".to_owned()
    } else {
        format!(
            "made {} write(s) meanwhile ({})",
            writes.len(),
            indices(&writes)
        )
    };
    let before_grant = if l.at_ns < h.start_ns {
        format!(" (before its acquire returned at {})", secs(h.start_ns))
    } else {
        String::new()
    };
    let believed = match l.back_ns.filter(|b| *b < h.end_ns) {
        Some(b) => format!(
            "it went on believing it held the lock for {} without it, until its value was back on a majority at {} (a silent re-take, if it was its own renewal)",
            secs(b.saturating_sub(from)),
            secs(b)
        ),
        None => format!(
            "it went on believing it held the lock for {}, until it {} at {} (#{})",
            secs(h.end_ns.saturating_sub(from)),
            h.end.phrase(),
            secs(h.end_ns),
            h.end_index
        ),
    };
    let active = active_during(faults, l.at_ns, l.until_ns);
    let summary = format!(
        "process {p} held lock {lock:?} (acquired #{} at {}, {}) when {}{before_grant}; {believed}, and {wrote}; {UNTOLD}; {}",
        h.acquire_index,
        secs(h.start_ns),
        token_phrase(h.token),
        where_,
        active_phrase(&active)
    );
    let ended = (l.until_ns == h.end_ns).then_some(h.end_index);
    let mut f = Finding::new(FindingKind::SilentLoss, summary).with_indices(
        std::iter::once(h.acquire_index)
            .chain(writes)
            .chain(ended)
            .collect(),
    );
    f.lock = Some(lock.to_owned());
    f.processes = std::iter::once(p)
        .chain(
            l.lost
                .iter()
                .filter_map(|iv| iv.end.as_ref()?.by.as_deref().and_then(owner)),
        )
        .fold(Vec::new(), |mut v, q| {
            if !v.contains(&q) {
                v.push(q);
            }
            v
        });
    f.tokens = h.token.into_iter().collect();
    f.window = Some(TimeWindow {
        start_ns: l.at_ns,
        end_ns: l.until_ns.max(l.at_ns),
    });
    f.faults = active.into_iter().cloned().collect();
    let mut server: Vec<u64> = l
        .lost
        .iter()
        .flat_map(|iv| {
            [
                iv.set_index,
                iv.end.as_ref().map_or(iv.set_index, |e| e.index),
            ]
        })
        .collect();
    server.sort_unstable();
    server.dedup();
    f.server_indices = server;
    f
}

pub(crate) fn retake(
    lock: &str,
    r: &Retake<'_>,
    owner: &dyn Fn(&str) -> Option<u64>,
    faults: &[FaultWindow],
) -> Finding {
    let h = r.held;
    let p = h.process;
    let end = r.before.end.as_ref().expect("a re-taken record ended");
    let by = match r.renew {
        Some(w) => format!(
            "by its renewal invoked at {} (#{})",
            secs(w.invoke_ns),
            w.invoke_index
        ),
        None => "while the history shows no renewal of it in flight (a renewal inside its library, unreported)".to_owned(),
    };
    let active = active_during(faults, end.ns, r.again.start_ns);
    let summary = format!(
        "on {} the record {:?} of process {p}'s value {:?} (lock {lock:?}, acquired #{} at {}, {}): {}, and it was set again with the same value at {} (server record #{}) {by}; process {p} held on throughout as if nothing had happened, and its library never told it (no `lost` or `suspended` notice in between); {}",
        r.again.node,
        r.again.key,
        r.again.value,
        h.acquire_index,
        secs(h.start_ns),
        token_phrase(h.token),
        end_phrase(end, owner),
        secs(r.again.start_ns),
        r.again.set_index,
        active_phrase(&active)
    );
    let mut history = vec![h.acquire_index];
    history.extend(r.renew.map(|w| w.invoke_index));
    let mut f = Finding::new(FindingKind::SilentRetake, summary).with_indices(history);
    f.lock = Some(lock.to_owned());
    f.processes = vec![p];
    f.tokens = h.token.into_iter().collect();
    f.window = Some(TimeWindow {
        start_ns: end.ns,
        end_ns: r.again.start_ns,
    });
    f.faults = active.into_iter().cloned().collect();
    let mut server = vec![r.before.set_index, end.index, r.again.set_index];
    server.sort_unstable();
    server.dedup();
    f.server_indices = server;
    f
}
