//! Test oracle: what made a second holder possible, from the whole history, by the rule
//! [`crate::lock::stream::culprit`] states and follows as the history streams: the latest
//! stale release or renewal completed between the two grants, else the first to complete of
//! those in flight at the later grant, else the earlier holder's lease running out first,
//! else the latest stale one whose reply crossed the earlier grant.

use super::holding::{Holding, Holdings};
use super::ops::{Op, Ops};
use crate::history::{Event, EventKind, F};
use crate::lock::stream::culprit::{Culprit, Culprits, StaleOp};

/// Whether `op` completed `ok` before its process retired (no `info` of it came earlier).
fn counts(ops: &Ops<'_>, op: &Op<'_>) -> bool {
    let Some(c) = op.completion.filter(|c| c.kind == EventKind::Ok) else {
        return false;
    };
    let retired = ops.by_process[&op.process].iter().any(|&i| {
        ops.ops[i]
            .completion
            .is_some_and(|d| d.kind == EventKind::Info && d.index < c.index)
    });
    !retired
}

/// The history index of `p`'s latest grant of `lock` before history index `before`.
fn last_grant(ops: &Ops<'_>, p: u64, lock: &str, before: u64) -> Option<u64> {
    ops.by_process[&p]
        .iter()
        .map(|&i| &ops.ops[i])
        .filter(|op| op.f == F::Acquire && op.lock == lock && counts(ops, op))
        .filter_map(|op| op.completion.map(|c| c.index))
        .filter(|&i| i < before)
        .max()
}

/// `op` as a stale operation against holding `a`, if it is one (a release or renewal naming
/// `a`'s lock on its invoke that succeeded for a process not granted the lock since `a` was),
/// and whether its process's own key surely still lived at `a`'s grant (it ranks below).
fn stale(
    ops: &Ops<'_>,
    held: &Holdings<'_>,
    op: &Op<'_>,
    a: &Holding<'_>,
) -> Option<(StaleOp, bool)> {
    let named = op.invoke.lock.as_deref().unwrap_or("");
    if !matches!(op.f, F::Release | F::Renew) || named.is_empty() || named != a.lock {
        return None;
    }
    let c = op.completion?;
    if !counts(ops, op) {
        return None;
    }
    let granted = last_grant(ops, op.process, a.lock, c.index);
    if granted.is_some_and(|g| g >= a.acquire_index) {
        return None;
    }
    // The process's holding from that grant, if still open when the request came back (a
    // release's ended at its invoke).
    let open = granted.and_then(|g| {
        held.list.iter().find(|h| {
            h.process == op.process && h.acquire_index == g && h.end_index >= op.invoke.index
        })
    });
    let lived = open
        .and_then(|h| runs_out(ops, h, c.index))
        .is_some_and(|(t, _)| t > a.start_ns);
    Some((stale_op(op, c), lived))
}

/// Until when `h`'s key surely lived, as of history index `before`: its lease as the holder
/// counted it, or as its grant says, whichever is later.
/// When `h`'s lease runs out, and the request it was counted from when that set it (not the
/// key's own lease).
fn runs_out(ops: &Ops<'_>, h: &Holding<'_>, before: u64) -> Option<(u64, Option<u64>)> {
    let grant = ops.by_process[&h.process]
        .iter()
        .filter_map(|&i| ops.ops[i].completion)
        .find(|c| c.index == h.acquire_index)?;
    let v = &grant.value;
    let key_until = Culprits::key_until(grant.time_ns, v.sent_ns, v.lease_ms);
    lease_at(ops, h, before).map(|(t, from)| match key_until {
        Some(k) if k > t => (k, None),
        _ => (t, Some(from)),
    })
}

/// When `h`'s lease, as its holder counted it before history index `before`, runs out, and
/// the request it counted from.
fn lease_at(ops: &Ops<'_>, h: &Holding<'_>, before: u64) -> Option<(u64, u64)> {
    let mine = || ops.by_process[&h.process].iter().map(|&i| &ops.ops[i]);
    let acquire = mine().find(|op| {
        op.f == F::Acquire && op.completion.is_some_and(|c| c.index == h.acquire_index)
    })?;
    let ms = acquire
        .completion
        .and_then(|c| c.value.lease_ms)
        .or(acquire.invoke.value.lease_ms)?;
    let renewed = mine()
        .filter(|op| op.f == F::Renew && counts(ops, op))
        .filter(|op| op.lock.is_empty() || op.lock == h.lock)
        .filter_map(|op| op.completion.map(|c| (c.index, op.invoke.time_ns)))
        .filter(|&(i, _)| h.acquire_index < i && i < before)
        .max();
    let from = renewed.map_or(acquire.invoke.time_ns, |r| r.1);
    Some((from.saturating_add(ms.saturating_mul(1_000_000)), from))
}

/// What made `b`'s grant possible while `a` held the lock, if the history shows it.
pub(crate) fn culprit(
    ops: &Ops<'_>,
    held: &Holdings<'_>,
    a: &Holding<'_>,
    b: &Holding<'_>,
) -> Option<Culprit> {
    let candidates: Vec<(StaleOp, bool)> = ops
        .ops
        .iter()
        .filter_map(|op| stale(ops, held, op, a))
        .collect();
    let between = |lived: bool| {
        candidates
            .iter()
            .filter(|s| s.1 == lived)
            .map(|s| s.0)
            .filter(|s| a.acquire_index < s.done_index && s.done_index < b.acquire_index)
            .max_by_key(|s| s.done_index)
    };
    let in_flight = |lived: bool| {
        candidates
            .iter()
            .filter(|s| s.1 == lived)
            .map(|s| s.0)
            .filter(|s| s.invoke_index < b.acquire_index && b.acquire_index < s.done_index)
            .min_by_key(|s| s.done_index)
    };
    let op = between(false)
        .or_else(|| in_flight(false))
        .or_else(|| between(true))
        .or_else(|| in_flight(true));
    if let Some(op) = op {
        return Some(Culprit::Stale(op));
    }
    let expired = runs_out(ops, a, b.acquire_index).filter(|&(t, _)| t < b.start_ns);
    if let Some((expired_ns, counted_from_ns)) = expired {
        return Some(Culprit::Expired {
            expired_ns,
            counted_from_ns,
        });
    }
    crossed(ops, a).map(Culprit::Crossed)
}

/// The latest release or renewal naming `a`'s lock, counted, answered after `a` asked and
/// after the grant of the lock before `a`'s, and before `a`'s grant, from a process other
/// than `a`'s not granted the lock since that earlier grant, or from that grant's holder past
/// the lease its grant reported.
fn crossed(ops: &Ops<'_>, a: &Holding<'_>) -> Option<StaleOp> {
    let before = (ops.ops.iter())
        .filter(|op| op.f == F::Acquire && op.lock == a.lock && counts(ops, op))
        .filter_map(|op| op.completion.map(|c| c.index))
        .filter(|&i| i < a.acquire_index)
        .max();
    (ops.ops.iter())
        .filter(|op| matches!(op.f, F::Release | F::Renew) && op.process != a.process)
        .filter(|op| op.invoke.lock.as_deref() == Some(a.lock) && counts(ops, op))
        .filter_map(|op| op.completion.map(|c| (op, c)))
        .filter(|(_, c)| before.is_none_or(|g| g < c.index) && c.index < a.acquire_index)
        .filter(|(_, c)| c.time_ns > a.asked_ns)
        .filter(|(op, c)| {
            let g = last_grant(ops, op.process, a.lock, c.index);
            let superseded = g.is_none_or(|g| before.is_some_and(|b| g < b));
            let outlived = g.is_some()
                && g == before
                && grant_key_until(ops, op.process, g).is_some_and(|t| t < c.time_ns);
            superseded || outlived
        })
        .max_by_key(|(_, c)| c.index)
        .map(|(op, c)| stale_op(op, c))
}

/// `op` answered by `c`, as a culprit names it.
fn stale_op(op: &Op<'_>, c: &Event) -> StaleOp {
    StaleOp {
        process: op.process,
        f: op.f,
        invoke_ns: op.invoke.time_ns,
        invoke_index: op.invoke.index,
        done_ns: c.time_ns,
        done_index: c.index,
    }
}

/// How long at least `p`'s grant at history index `g` says its key lives.
fn grant_key_until(ops: &Ops<'_>, p: u64, g: Option<u64>) -> Option<u64> {
    let c = ops.by_process[&p]
        .iter()
        .filter_map(|&i| ops.ops[i].completion)
        .find(|c| Some(c.index) == g)?;
    Culprits::key_until(c.time_ns, c.value.sent_ns, c.value.lease_ms)
}
