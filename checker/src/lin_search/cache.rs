//! The memo of visited search configurations: (key of the linearized set, model state).
//! Open addressing over a slot array; keys live in fixed-capacity chunks that are never
//! moved, so growing the memo copies nothing but the slot array (and, for keys of varying
//! width, a locator list). Chunks double from a small first one: most parts are small, and a
//! large first allocation would cost each of them fresh pages from the kernel.

use std::hash::Hash;

/// Most words per key chunk for keys of varying width (a longer key gets a chunk of its own),
/// and the fewest in the first.
const CHUNK_WORDS: usize = 1 << 15;
const FIRST_WORDS: usize = 1 << 8;
/// Records (for keys of fixed width) and states in the first chunk: chunk `k` holds
/// `FIRST << k` of them, so finding one takes a logarithm and shifts, not a search.
const FIRST_SHIFT: u32 = 6;
/// Slots of an empty memo.
const FIRST_SLOTS: usize = 1 << 8;

/// The chunk and offset of entry `e` in chunks that double from `1 << FIRST_SHIFT` entries.
#[inline]
fn locate(e: usize) -> (usize, usize) {
    let k = ((e >> FIRST_SHIFT) + 1).ilog2() as usize;
    (k, e - (((1 << k) - 1) << FIRST_SHIFT))
}

/// Entries in chunk `k`.
fn chunk_len(k: usize) -> usize {
    1 << (FIRST_SHIFT as usize + k)
}

/// Set of `(key, state)` pairs.
pub struct Cache<S> {
    /// When every key has this many words, records (hash, key) sit at fixed strides and need
    /// no locator; otherwise a record is (hash, key length, key).
    fixed: Option<usize>,
    /// Slot -> upper 32 hash bits (a tag that rejects most mismatches without touching the
    /// record) and entry number + 1 (0 is empty).
    slots: Vec<(u32, u32)>,
    len: usize,
    /// Entry -> (chunk, offset) of its record, for keys of varying width.
    locs: Vec<(u32, u32)>,
    chunks: Vec<Vec<u64>>,
    words: usize,
    states: Vec<Vec<S>>,
    /// States the state chunks have room for.
    state_room: usize,
}

impl<S: Eq + Hash + Clone> Cache<S> {
    /// `fixed`: the width of every key, if they all have the same.
    pub fn new(fixed: Option<usize>) -> Self {
        Cache {
            fixed,
            slots: vec![(0, 0); FIRST_SLOTS],
            len: 0,
            locs: Vec::new(),
            chunks: Vec::new(),
            words: 0,
            states: Vec::new(),
            state_room: 0,
        }
    }

    /// Approximate heap bytes held, for the memory budget.
    pub fn bytes(&self) -> usize {
        self.slots.len() * 8
            + self.locs.capacity() * 8
            + self.words * 8
            + self.state_room * std::mem::size_of::<S>()
    }

    /// The hash and key of entry `e`.
    #[inline]
    fn record(&self, e: usize) -> (u64, &[u64]) {
        if let Some(w) = self.fixed {
            let (c, off) = locate(e);
            let off = off * (1 + w);
            let r = &self.chunks[c][off..off + 1 + w];
            return (r[0], &r[1..]);
        }
        let (c, off) = self.locs[e];
        let chunk = &self.chunks[c as usize];
        let off = off as usize;
        let len = chunk[off + 1] as usize;
        (chunk[off], &chunk[off + 2..off + 2 + len])
    }

    /// Inserts the pair unless present; returns true when it was new. `hash` must be a
    /// function of `(key, state)` only; with a fixed width, `key` must have that width.
    #[inline]
    pub fn insert(&mut self, hash: u64, key: &[u64], state: &S) -> bool {
        debug_assert!(self.fixed.is_none_or(|w| w == key.len()));
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
                let (h, k) = self.record(e);
                if h == hash && k.len() == key.len() && k.iter().zip(key).all(|(a, b)| a == b) {
                    let (c, off) = locate(e);
                    if self.states[c][off] == *state {
                        return false;
                    }
                }
            }
            i = (i + 1) & mask;
        }
        let e = self.len;
        self.push_record(hash, key);
        if e == self.state_room {
            let room = chunk_len(self.states.len());
            self.states.push(Vec::with_capacity(room));
            self.state_room += room;
        }
        self.states
            .last_mut()
            .expect("state chunk pushed")
            .push(state.clone());
        self.slots[i] = (tag, e as u32 + 1);
        self.len += 1;
        if self.len * 2 > self.slots.len() {
            self.grow();
        }
        true
    }

    #[inline]
    fn push_record(&mut self, hash: u64, key: &[u64]) {
        let need = match self.fixed {
            Some(w) => 1 + w,
            None => 2 + key.len(),
        };
        let fits = self
            .chunks
            .last()
            .is_some_and(|c| c.capacity() - c.len() >= need);
        if !fits {
            // Reserved up front and filled by pushes: never reallocated, never zeroed. With a
            // fixed width the capacity is a whole number of records, so `record` finds them.
            let cap = match self.fixed {
                Some(w) => chunk_len(self.chunks.len()) * (1 + w),
                None => self.words.clamp(FIRST_WORDS, CHUNK_WORDS).max(need),
            };
            self.chunks.push(Vec::with_capacity(cap));
            self.words += cap;
        }
        let c = self.chunks.len() - 1;
        let chunk = &mut self.chunks[c];
        if self.fixed.is_none() {
            self.locs.push((c as u32, chunk.len() as u32));
        }
        chunk.push(hash);
        if self.fixed.is_none() {
            chunk.push(key.len() as u64);
        }
        // Keys are a few words: a counted copy beats a memcpy call.
        chunk.extend(key.iter().copied());
    }

    fn grow(&mut self) {
        let n = self.slots.len() * 2;
        let mask = n - 1;
        let mut slots = vec![(0u32, 0u32); n];
        for e in 0..self.len {
            let h = self.record(e).0;
            let mut i = (h as usize) & mask;
            while slots[i].1 != 0 {
                i = (i + 1) & mask;
            }
            slots[i] = ((h >> 32) as u32, e as u32 + 1);
        }
        self.slots = slots;
    }
}
