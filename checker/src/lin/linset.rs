//! The set of linearized operations of a search, kept so that its memo key is short: completed
//! operations are numbered in invocation order, and every operation invoked long enough ago
//! is linearized in every configuration the search can reach, so the key is the count of
//! leading full words plus the words after them up to the last set bit. Operations of unknown
//! outcome, which may stay unlinearized forever, have a separate bitset. Keys cost a few
//! words however long the history is.

use super::hash::zobrist;

pub struct LinSet {
    /// Per operation: whether it is in the open region, and its bit number in its region.
    open: Vec<bool>,
    rank: Vec<u32>,
    closed_bits: Vec<u64>,
    open_bits: Vec<u64>,
    /// Completed operations in total, to know which bits of the last word exist.
    closed_len: usize,
    /// Leading words of `closed_bits` whose every bit is set.
    lead: usize,
    /// One past the last non-zero word of `closed_bits`, at least `lead`.
    hi: usize,
    /// One past the last non-zero word of `open_bits`.
    open_hi: usize,
    keys: Vec<u64>,
    hash: u64,
}

impl LinSet {
    /// `open[i]` tells whether operation `i` has an unknown outcome; `calls[i]` orders
    /// completed operations by invocation.
    pub fn new(open: &[bool], calls: &[u64]) -> LinSet {
        let n = open.len();
        let mut closed: Vec<usize> = (0..n).filter(|&i| !open[i]).collect();
        closed.sort_by_key(|&i| (calls[i], i));
        let mut rank = vec![0u32; n];
        for (r, &i) in closed.iter().enumerate() {
            rank[i] = r as u32;
        }
        let mut r = 0;
        for i in (0..n).filter(|&i| open[i]) {
            rank[i] = r;
            r += 1;
        }
        LinSet {
            open: open.to_vec(),
            rank,
            closed_bits: vec![0; closed.len().div_ceil(64)],
            open_bits: vec![0; (r as usize).div_ceil(64)],
            closed_len: closed.len(),
            lead: 0,
            hi: 0,
            open_hi: 0,
            keys: (0..n).map(zobrist).collect(),
            hash: 0,
        }
    }

    /// A hash of the set (XOR of per-operation keys).
    #[inline]
    pub fn hash(&self) -> u64 {
        self.hash
    }

    #[inline]
    fn full(&self, w: usize) -> u64 {
        let bits = self.closed_len - w * 64;
        if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        }
    }

    #[inline]
    pub fn contains(&self, i: usize) -> bool {
        let r = self.rank[i] as usize;
        let words = if self.open[i] {
            &self.open_bits
        } else {
            &self.closed_bits
        };
        words[r >> 6] & (1u64 << (r & 63)) != 0
    }

    #[inline]
    pub fn insert(&mut self, i: usize) {
        self.hash ^= self.keys[i];
        let r = self.rank[i] as usize;
        let (w, b) = (r >> 6, 1u64 << (r & 63));
        if self.open[i] {
            self.open_bits[w] |= b;
            self.open_hi = self.open_hi.max(w + 1);
            return;
        }
        self.closed_bits[w] |= b;
        self.hi = self.hi.max(w + 1);
        while self.lead < self.closed_bits.len()
            && self.closed_bits[self.lead] == self.full(self.lead)
        {
            self.lead += 1;
        }
        self.hi = self.hi.max(self.lead);
    }

    #[inline]
    pub fn remove(&mut self, i: usize) {
        self.hash ^= self.keys[i];
        let r = self.rank[i] as usize;
        let (w, b) = (r >> 6, 1u64 << (r & 63));
        if self.open[i] {
            self.open_bits[w] &= !b;
            while self.open_hi > 0 && self.open_bits[self.open_hi - 1] == 0 {
                self.open_hi -= 1;
            }
            return;
        }
        self.closed_bits[w] &= !b;
        self.lead = self.lead.min(w);
        while self.hi > self.lead && self.closed_bits[self.hi - 1] == 0 {
            self.hi -= 1;
        }
    }

    /// Writes the memo key into `out` (cleared first): equal sets give equal keys.
    #[inline]
    pub fn key(&self, out: &mut Vec<u64>) {
        out.clear();
        out.push(self.lead as u64 | ((self.hi - self.lead) as u64) << 32);
        // Keys are a few words: word-by-word pushes beat a memcpy call.
        for &w in &self.closed_bits[self.lead..self.hi] {
            out.push(w);
        }
        for &w in &self.open_bits[..self.open_hi] {
            out.push(w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_sets_reached_differently_have_equal_keys() {
        let n = 200;
        let open: Vec<bool> = (0..n).map(|i| i % 7 == 3).collect();
        let calls: Vec<u64> = (0..n as u64).map(|i| (i * 37) % 211).collect();
        let mut a = LinSet::new(&open, &calls);
        let mut b = LinSet::new(&open, &calls);
        for i in 0..150 {
            a.insert(i);
        }
        for i in (0..160).rev() {
            b.insert(i);
        }
        for i in 150..160 {
            b.remove(i);
        }
        let (mut ka, mut kb) = (Vec::new(), Vec::new());
        a.key(&mut ka);
        b.key(&mut kb);
        assert_eq!(ka, kb);
        assert_eq!(a.hash(), b.hash());
        assert!(a.contains(149) && !a.contains(150));
        a.remove(3);
        a.key(&mut ka);
        assert_ne!(ka, kb);
        assert!(ka.len() > 1, "removing an early op moves the frontier back");
    }
}
