//! The set of linearized operations of a search, kept so that its memo key is short: completed
//! operations are numbered in invocation order, and every operation invoked long enough ago
//! is linearized in every configuration the search can reach, so the key is the count of
//! leading full words plus the words after them up to the last set bit. Operations of unknown
//! outcome, which may stay unlinearized forever, have a separate bitset. Keys cost a few
//! words however long the history is. Short histories use the whole bitsets as a fixed-width
//! key instead, which is cheaper to build and to compare.

use super::hash::zobrist;

/// Histories whose bitsets fit in this many words use them whole as the key.
const FIXED_MAX_WORDS: usize = 8;

pub struct LinSet {
    /// Per operation: whether it has an unknown outcome, and its bit in `bits`.
    open: Vec<bool>,
    pos: Vec<u32>,
    /// Completed operations by invocation order in words `0..closed_words`, then operations
    /// of unknown outcome.
    bits: Vec<u64>,
    closed_words: usize,
    /// Completed operations in total, to know which bits of the last closed word exist.
    closed_len: usize,
    /// Leading closed words whose every bit is set (maintained only when cutting keys).
    lead: usize,
    /// One past the last non-zero closed word, at least `lead` (likewise).
    hi: usize,
    /// One past the last non-zero word overall, at least `closed_words` (likewise).
    open_hi: usize,
    keys: Vec<u64>,
    hash: u64,
    /// Keys are the whole bitset rather than cut to the frontier.
    fixed: bool,
}

impl LinSet {
    /// `open[i]` tells whether operation `i` has an unknown outcome; `calls[i]` orders
    /// completed operations by invocation.
    pub fn new(open: &[bool], calls: &[u64]) -> LinSet {
        let n = open.len();
        let mut closed: Vec<usize> = (0..n).filter(|&i| !open[i]).collect();
        closed.sort_by_key(|&i| (calls[i], i));
        let closed_words = closed.len().div_ceil(64);
        let mut pos = vec![0u32; n];
        for (r, &i) in closed.iter().enumerate() {
            pos[i] = r as u32;
        }
        let mut r = closed_words * 64;
        for i in (0..n).filter(|&i| open[i]) {
            pos[i] = r as u32;
            r += 1;
        }
        let words = r.div_ceil(64);
        LinSet {
            open: open.to_vec(),
            pos,
            bits: vec![0; words],
            closed_words,
            closed_len: closed.len(),
            lead: 0,
            hi: 0,
            open_hi: closed_words,
            keys: (0..n).map(zobrist).collect(),
            hash: 0,
            fixed: words <= FIXED_MAX_WORDS,
        }
    }

    /// The key width when every key has the same, else `None`.
    pub fn fixed_width(&self) -> Option<usize> {
        self.fixed.then_some(self.bits.len())
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
        let p = self.pos[i] as usize;
        self.bits[p >> 6] & (1u64 << (p & 63)) != 0
    }

    #[inline]
    pub fn insert(&mut self, i: usize) {
        self.hash ^= self.keys[i];
        let p = self.pos[i] as usize;
        let w = p >> 6;
        self.bits[w] |= 1u64 << (p & 63);
        if self.fixed {
            return;
        }
        if self.open[i] {
            self.open_hi = self.open_hi.max(w + 1);
            return;
        }
        self.hi = self.hi.max(w + 1);
        while self.lead < self.closed_words && self.bits[self.lead] == self.full(self.lead) {
            self.lead += 1;
        }
        self.hi = self.hi.max(self.lead);
    }

    #[inline]
    pub fn remove(&mut self, i: usize) {
        self.hash ^= self.keys[i];
        let p = self.pos[i] as usize;
        let w = p >> 6;
        self.bits[w] &= !(1u64 << (p & 63));
        if self.fixed {
            return;
        }
        if self.open[i] {
            while self.open_hi > self.closed_words && self.bits[self.open_hi - 1] == 0 {
                self.open_hi -= 1;
            }
            return;
        }
        self.lead = self.lead.min(w);
        while self.hi > self.lead && self.bits[self.hi - 1] == 0 {
            self.hi -= 1;
        }
    }

    /// The memo key: equal sets give equal keys. Either the bitset itself or a cut of it
    /// written into `scratch`.
    #[inline]
    pub fn key<'a>(&'a self, scratch: &'a mut Vec<u64>) -> &'a [u64] {
        if self.fixed {
            return &self.bits;
        }
        scratch.clear();
        scratch.push(self.lead as u64 | ((self.hi - self.lead) as u64) << 32);
        // Keys are a few words: word-by-word pushes beat a memcpy call.
        for &w in &self.bits[self.lead..self.hi] {
            scratch.push(w);
        }
        for &w in &self.bits[self.closed_words..self.open_hi] {
            scratch.push(w);
        }
        scratch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_sets_reached_differently_have_equal_keys() {
        for n in [200, 2000] {
            keys_agree(n);
        }
    }

    fn keys_agree(n: usize) {
        let open: Vec<bool> = (0..n).map(|i| i % 7 == 3).collect();
        let calls: Vec<u64> = (0..n as u64).map(|i| (i * 37) % 211).collect();
        let mut a = LinSet::new(&open, &calls);
        let mut b = LinSet::new(&open, &calls);
        let m = n * 3 / 4;
        for i in 0..m {
            a.insert(i);
        }
        for i in (0..m + 10).rev() {
            b.insert(i);
        }
        for i in m..m + 10 {
            b.remove(i);
        }
        let (mut sa, mut sb) = (Vec::new(), Vec::new());
        assert_eq!(a.key(&mut sa), b.key(&mut sb));
        assert_eq!(a.hash(), b.hash());
        assert!(a.contains(m - 1) && !a.contains(m));
        a.remove(3);
        assert_ne!(a.key(&mut sa), b.key(&mut sb));
    }

    #[test]
    fn long_histories_have_short_keys() {
        let n = 5000;
        let open = vec![false; n];
        let calls: Vec<u64> = (0..n as u64).collect();
        let mut set = LinSet::new(&open, &calls);
        assert_eq!(set.fixed_width(), None);
        for i in 0..4000 {
            set.insert(i);
        }
        set.insert(4070);
        let mut scratch = Vec::new();
        let len = set.key(&mut scratch).len();
        assert!(len <= 3, "{len}");
        set.remove(10);
        let len = set.key(&mut scratch).len();
        assert!(len > 60, "an early gap moves the frontier back");
    }
}
