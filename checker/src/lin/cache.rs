//! The memo of visited search configurations: (set of linearized operations, model state).
//! Open addressing over flat arrays so a lookup or insert never allocates per entry.

use std::hash::Hash;

/// Set of `(bitset, state)` pairs. Bitsets all have `words` words and are stored back to back.
pub struct Cache<S> {
    words: usize,
    /// Slot -> entry number + 1; 0 is empty.
    slots: Vec<u32>,
    hashes: Vec<u64>,
    bits: Vec<u64>,
    states: Vec<S>,
}

impl<S: Eq + Hash + Clone> Cache<S> {
    pub fn new(words: usize) -> Self {
        Cache {
            words,
            slots: vec![0; 1024],
            hashes: Vec::new(),
            bits: Vec::new(),
            states: Vec::new(),
        }
    }

    /// Approximate heap bytes held, for the memory budget.
    pub fn bytes(&self) -> usize {
        self.slots.len() * 4
            + self.hashes.len() * 8
            + self.bits.len() * 8
            + self.states.len() * std::mem::size_of::<S>()
    }

    /// Inserts the pair unless present; returns true when it was new. `hash` must be a
    /// function of `(bits, state)` only.
    pub fn insert(&mut self, hash: u64, bits: &[u64], state: &S) -> bool {
        debug_assert_eq!(bits.len(), self.words);
        let mask = self.slots.len() - 1;
        let mut i = (hash as usize) & mask;
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                break;
            }
            let e = (slot - 1) as usize;
            if self.hashes[e] == hash
                && self.bits[e * self.words..(e + 1) * self.words] == *bits
                && self.states[e] == *state
            {
                return false;
            }
            i = (i + 1) & mask;
        }
        let e = self.states.len();
        self.slots[i] = e as u32 + 1;
        self.hashes.push(hash);
        self.bits.extend_from_slice(bits);
        self.states.push(state.clone());
        if self.states.len() * 2 > self.slots.len() {
            self.grow();
        }
        true
    }

    fn grow(&mut self) {
        let n = self.slots.len() * 2;
        let mask = n - 1;
        let mut slots = vec![0u32; n];
        for (e, &h) in self.hashes.iter().enumerate() {
            let mut i = (h as usize) & mask;
            while slots[i] != 0 {
                i = (i + 1) & mask;
            }
            slots[i] = e as u32 + 1;
        }
        self.slots = slots;
    }
}
