//! Splitting a history into independent parts by key or lock name (P-compositionality).

use crate::lin_search::{History, OpF};
use std::collections::BTreeMap;

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
