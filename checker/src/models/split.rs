//! Splitting a history into independent parts by key or lock name (P-compositionality).

use crate::lin_search::{History, OpF};
use std::collections::{BTreeMap, HashMap};

/// Groups the indices of the kept operations by their key; operations without a key form the
/// part keyed by the empty string. Parts come out in key order.
pub fn by_key(history: &History, keep: impl Fn(usize) -> bool) -> Vec<(String, Vec<usize>)> {
    let mut parts: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, op) in history.ops.iter().enumerate() {
        if keep(i) {
            parts
                .entry(op.key.as_deref().unwrap_or(""))
                .or_default()
                .push(i);
        }
    }
    parts.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// Lock models look only at these and ignore the reads and writes of the protected resource
/// that share a lockpick history with them.
pub fn is_lock_op(f: OpF) -> bool {
    matches!(f, OpF::Acquire | OpF::Release | OpF::Renew)
}

/// For each of a part's operations (`idx`, in invocation order), whether nothing its process
/// does can follow it: it is the process's last operation in the part, and every earlier one
/// returned before it was invoked. A lock model's acquire or renewal of unknown outcome that
/// ends its process this way is one the search never needs ([`Spec::never_needed`]): a Jepsen
/// client that got `info` is retired, so in a lockpick history every such operation is one.
///
/// [`Spec::never_needed`]: crate::lin_search::Spec::never_needed
pub fn ends_its_process(history: &History, idx: &[usize]) -> Vec<bool> {
    // Per process: its latest operation so far (a position in `idx`), and the latest return
    // of those before (`u64::MAX` once one of them never returned).
    let mut seen: HashMap<u64, (usize, u64)> = HashMap::new();
    let mut ends = vec![false; idx.len()];
    for (k, &i) in idx.iter().enumerate() {
        let op = &history.ops[i];
        let ret = if op.is_open() {
            u64::MAX
        } else {
            op.ret.unwrap_or(u64::MAX)
        };
        let before = match seen.get(&op.process) {
            Some(&(prev, latest)) => {
                ends[prev] = false;
                Some(latest)
            }
            None => None,
        };
        ends[k] = before.is_none_or(|latest| latest < op.call);
        let latest = before.map_or(ret, |l| l.max(ret));
        seen.insert(op.process, (k, latest));
    }
    ends
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lin_search::{Datum, Op};

    fn op(process: u64, call: u64, ret: Option<u64>) -> Op {
        Op {
            process,
            f: OpF::Acquire,
            key: None,
            arg: Datum::Nil,
            out: ret.map(|_| Datum::Nil),
            call,
            ret,
            call_ns: call,
            ret_ns: ret,
        }
    }

    #[test]
    fn an_operation_ends_its_process_when_nothing_of_the_process_can_follow_it() {
        let history = History {
            ops: vec![
                op(1, 0, Some(1)), // 1 acts again
                op(2, 2, None),    // 2 never returned and acts again
                op(1, 3, None),    // 1's last; its first returned before
                op(3, 4, Some(9)), // 3's only operation
                op(2, 5, Some(6)), // 2's last, but its first may still take effect after it
            ],
        };
        let idx: Vec<usize> = (0..5).collect();
        assert_eq!(
            ends_its_process(&history, &idx),
            [false, false, true, true, false]
        );
    }
}
