//! Fast non-cryptographic hashing for the search cache: a multiply-rotate hasher for model
//! states and per-operation Zobrist keys so the hash of the linearized set updates in O(1).

use std::hash::{Hash, Hasher};

const K: u64 = 0xf135_7aea_2e62_a9c5;

/// A small multiply-rotate hasher (the FxHash idea); the cache only needs spread, not DoS
/// resistance.
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.write_u64(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.write_u64(u64::from_le_bytes(buf) ^ rest.len() as u64);
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(i as u64);
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64);
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(K);
    }
    fn write_i64(&mut self, i: i64) {
        self.write_u64(i as u64);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
}

/// `BuildHasher` for std maps keyed by small values.
pub type FastBuild = std::hash::BuildHasherDefault<FastHasher>;

/// Hashes one value with [`FastHasher`].
pub fn hash_one<T: Hash>(t: &T) -> u64 {
    let mut h = FastHasher::default();
    t.hash(&mut h);
    h.finish()
}

/// A well-mixed 64-bit key for operation `i` (splitmix64), so XOR-ing the keys of the
/// linearized operations gives a hash of the set.
pub fn zobrist(i: usize) -> u64 {
    let mut z = (i as u64)
        .wrapping_add(1)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
