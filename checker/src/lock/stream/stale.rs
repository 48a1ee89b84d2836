//! Stale fencing-token writes, per resource (lock name): writes the resource accepted although
//! it had already accepted a newer token, proven by the resource's own `max_token` or by
//! real-time order; and writes the fence rejected. Memory: per resource the highest accepted
//! write and the last write accepted with each of the [`TOKENS_KEPT`] highest tokens.

use std::collections::{BTreeMap, HashMap};

/// How many of a resource's highest accepted tokens keep the write that carried them, to name
/// the write a `max_token` refers to. A `max_token` further back than this (a resource
/// reporting a token thousands of grants old) is still a stale write; the finding then names
/// the token but not the write.
pub(crate) const TOKENS_KEPT: usize = 4096;

/// A completed write, as evidence.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Write {
    pub process: u64,
    pub token: u64,
    pub invoke_ns: u64,
    pub invoke_index: u64,
    pub done_ns: u64,
    pub done_index: u64,
}

/// How a stale write was proven.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Proof {
    /// The resource reported a higher `max_token` than the write's token.
    MaxToken { max: u64, earlier: Option<Write> },
    /// A write with a higher token completed before this one was invoked.
    RealTime { earlier: Write },
}

#[derive(Debug, Default)]
struct Resource {
    highest: Option<Write>,
    by_token: BTreeMap<u64, Write>,
}

#[derive(Debug, Default)]
pub(crate) struct StaleWrites {
    resources: HashMap<u32, Resource>,
}

impl StaleWrites {
    /// The highest accepted write on `lock` when a write is invoked.
    pub fn at_invoke(&self, lock: u32) -> Option<Write> {
        self.resources.get(&lock).and_then(|r| r.highest)
    }

    /// A write on `lock` completed `ok`; `seen` is what [`StaleWrites::at_invoke`] gave.
    /// Returns the proof that it was stale, if any.
    pub fn accepted(
        &mut self,
        lock: u32,
        w: Write,
        seen: Option<Write>,
        max: Option<u64>,
    ) -> Option<Proof> {
        let r = self.resources.entry(lock).or_default();
        let real_time = seen
            .filter(|s| s.token > w.token)
            .map(|earlier| Proof::RealTime { earlier });
        let by_max = max.filter(|&m| m > w.token).map(|max| Proof::MaxToken {
            max,
            earlier: r.by_token.get(&max).copied(),
        });
        r.by_token.insert(w.token, w);
        if r.by_token.len() > TOKENS_KEPT {
            r.by_token.pop_first();
        }
        if r.highest.is_none_or(|h| w.token > h.token) {
            r.highest = Some(w);
        }
        real_time.or(by_max)
    }
}
