//! The memo of visited search configurations: (set of linearized operations, model state).
//! Open addressing over flat arrays; records live in fixed-size chunks that are never moved,
//! so growing the memo copies nothing but the slot array.

use std::hash::Hash;

/// Records per chunk.
const CHUNK: usize = 1 << 12;

/// Set of `(bitset, state)` pairs. Bitsets all have `words` words.
pub struct Cache<S> {
    words: usize,
    /// Slot -> upper 32 hash bits (a tag that rejects most mismatches without touching the
    /// record) and record number + 1 (0 is empty).
    slots: Vec<(u32, u32)>,
    len: usize,
    /// Per record: its full hash, then its bitset.
    records: Vec<Vec<u64>>,
    states: Vec<Vec<S>>,
}

impl<S: Eq + Hash + Clone> Cache<S> {
    pub fn new(words: usize) -> Self {
        Cache {
            words,
            slots: vec![(0, 0); 1024],
            len: 0,
            records: Vec::new(),
            states: Vec::new(),
        }
    }

    /// Approximate heap bytes held, for the memory budget.
    pub fn bytes(&self) -> usize {
        self.slots.len() * 8
            + self.records.len() * CHUNK * (1 + self.words) * 8
            + self.states.len() * CHUNK * std::mem::size_of::<S>()
    }

    #[inline]
    fn record(&self, e: usize) -> &[u64] {
        let w = 1 + self.words;
        let off = (e % CHUNK) * w;
        &self.records[e / CHUNK][off..off + w]
    }

    /// Inserts the pair unless present; returns true when it was new. `hash` must be a
    /// function of `(bits, state)` only.
    #[inline]
    pub fn insert(&mut self, hash: u64, bits: &[u64], state: &S) -> bool {
        debug_assert_eq!(bits.len(), self.words);
        let tag = (hash >> 32) as u32;
        let mask = self.slots.len() - 1;
        let mut i = (hash as usize) & mask;
        loop {
            let (t, slot) = self.slots[i];
            if slot == 0 {
                break;
            }
            if t == tag {
                let e = (slot - 1) as usize;
                let r = self.record(e);
                if r[0] == hash
                    && r[1..].iter().zip(bits).all(|(a, b)| a == b)
                    && self.states[e / CHUNK][e % CHUNK] == *state
                {
                    return false;
                }
            }
            i = (i + 1) & mask;
        }
        let e = self.len;
        if e % CHUNK == 0 {
            // Reserved up front and filled by pushes: never reallocated, never zeroed.
            self.records
                .push(Vec::with_capacity(CHUNK * (1 + self.words)));
            self.states.push(Vec::with_capacity(CHUNK));
        }
        let chunk = self.records.last_mut().expect("chunk pushed");
        chunk.push(hash);
        chunk.extend_from_slice(bits);
        self.states
            .last_mut()
            .expect("chunk pushed")
            .push(state.clone());
        self.slots[i] = (tag, e as u32 + 1);
        self.len += 1;
        if self.len * 2 > self.slots.len() {
            self.grow();
        }
        true
    }

    fn grow(&mut self) {
        let n = self.slots.len() * 2;
        let mask = n - 1;
        let mut slots = vec![(0u32, 0u32); n];
        for e in 0..self.len {
            let h = self.record(e)[0];
            let mut i = (h as usize) & mask;
            while slots[i].1 != 0 {
                i = (i + 1) & mask;
            }
            slots[i] = ((h >> 32) as u32, e as u32 + 1);
        }
        self.slots = slots;
    }
}
