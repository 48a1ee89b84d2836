//! The strings of one kv key, interned so that a search state is a small id: each distinct
//! string has exactly one id, so states compare as integers. A string is given whole (a get's
//! result, an argument) or is an earlier string with a given one appended, which costs no copy
//! of the text. Polynomial fingerprints find candidates for equality, and the text decides.
//! A get's result also keeps the fingerprint of each of its prefixes, so whether a string
//! starts it is one comparison.

use crate::lin_search::hash::{hash_one, FastBuild};
use std::collections::HashMap;

/// Fingerprint base: odd, so that its powers never vanish modulo 2^64. Equality of strings
/// never rests on a fingerprint alone, so a weak one could only cost time.
const BASE: u64 = 0x1f3d_5b79_a3c1_e2d7;

const NONE: u32 = u32::MAX;

/// Fingerprint of `a` followed by `b`, from theirs and `BASE^len(b)`.
#[inline]
pub fn joined(a_fp: u64, b_fp: u64, b_pow: u64) -> u64 {
    a_fp.wrapping_mul(b_pow).wrapping_add(b_fp)
}

#[derive(Debug, Clone, Copy)]
enum Node {
    /// A given string: its number in `Strings::given`.
    Given(u32),
    /// An earlier string with a given one appended.
    Concat(u32, u32),
}

#[derive(Debug, Clone, Copy)]
pub struct Meta {
    node: Node,
    pub len: u64,
    pub fp: u64,
    /// `BASE^len`, to extend fingerprints on the right.
    pub pow: u64,
    /// Next string with the same length and fingerprint, or `NONE`.
    same: u32,
}

/// A given string's text in `Strings::text` and where its prefix fingerprints start in
/// `Strings::prefixes` (`NONE` until a get has returned it).
#[derive(Debug, Clone, Copy)]
struct Given {
    start: u32,
    end: u32,
    prefixes: u32,
    /// Next given string with the same text hash, or `NONE`.
    same_hash: u32,
}

/// The interned strings of one key.
#[derive(Clone)]
pub struct Strings {
    meta: Vec<Meta>,
    /// The texts of the given strings, one after another.
    text: String,
    given: Vec<Given>,
    /// Text hash -> first given string with it.
    by_hash: HashMap<u64, u32, FastBuild>,
    /// Fingerprints of the prefixes of lengths 1 to its length of each string a get returned.
    prefixes: Vec<u64>,
    /// (length, fingerprint) -> first string with them.
    by_fp: HashMap<(u64, u64), u32, FastBuild>,
}

impl Strings {
    /// The table with the empty string, id 0.
    pub fn new() -> Self {
        let mut s = Strings {
            meta: Vec::new(),
            text: String::new(),
            given: Vec::new(),
            by_hash: HashMap::default(),
            prefixes: Vec::new(),
            by_fp: HashMap::default(),
        };
        s.intern("", false);
        s
    }

    #[inline]
    pub fn meta(&self, id: u32) -> &Meta {
        &self.meta[id as usize]
    }

    fn given_text(&self, g: u32) -> &str {
        let g = &self.given[g as usize];
        &self.text[g.start as usize..g.end as usize]
    }

    /// The text of a given string (appended pieces and arguments are).
    fn piece(&self, id: u32) -> &str {
        match self.meta[id as usize].node {
            Node::Given(g) => self.given_text(g),
            Node::Concat(..) => unreachable!("appended pieces are given strings"),
        }
    }

    /// The full text of string `id`.
    pub fn text(&self, id: u32) -> String {
        let mut pieces = Vec::new();
        let mut cur = id;
        loop {
            match self.meta[cur as usize].node {
                Node::Given(g) => {
                    pieces.push(self.given_text(g));
                    break;
                }
                Node::Concat(a, b) => {
                    pieces.push(self.piece(b));
                    cur = a;
                }
            }
        }
        pieces.reverse();
        pieces.concat()
    }

    /// Whether string `id` is `s`, without building its text.
    fn equals(&self, mut id: u32, mut s: &str) -> bool {
        loop {
            let m = &self.meta[id as usize];
            if m.len != s.len() as u64 {
                return false;
            }
            match m.node {
                Node::Given(g) => return self.given_text(g) == s,
                Node::Concat(a, b) => {
                    let Some(rest) = s.strip_suffix(self.piece(b)) else {
                        return false;
                    };
                    s = rest;
                    id = a;
                }
            }
        }
    }

    fn add(&mut self, node: Node, len: u64, fp: u64, pow: u64) -> u32 {
        let id = self.meta.len() as u32;
        let same = self.by_fp.insert((len, fp), id).unwrap_or(NONE);
        self.meta.push(Meta {
            node,
            len,
            fp,
            pow,
            same,
        });
        id
    }

    /// The id of `s`; `read` when a get returned it, which keeps its prefix fingerprints.
    /// Only before any [`Strings::concat`]: a given string is then a new one or a given one.
    pub fn intern(&mut self, s: &str, read: bool) -> u32 {
        // A hash of the text finds a repeat without a fingerprint pass over it.
        let h = hash_one(&s);
        let mut g = self.by_hash.get(&h).copied().unwrap_or(NONE);
        while g != NONE && self.given_text(g) != s {
            g = self.given[g as usize].same_hash;
        }
        if g != NONE {
            if read && self.given[g as usize].prefixes == NONE {
                self.given[g as usize].prefixes = self.prefixes.len() as u32;
                self.fingerprint(s, true);
            }
            return g;
        }
        g = self.given.len() as u32;
        let start = self.text.len() as u32;
        self.text.push_str(s);
        self.given.push(Given {
            start,
            end: self.text.len() as u32,
            prefixes: if read {
                self.prefixes.len() as u32
            } else {
                NONE
            },
            same_hash: self.by_hash.insert(h, g).unwrap_or(NONE),
        });
        let (fp, pow) = self.fingerprint(s, read);
        let id = self.add(Node::Given(g), s.len() as u64, fp, pow);
        debug_assert_eq!(id, g, "given strings come first, one id each");
        g
    }

    /// The fingerprint of `s` and `BASE^len(s)`, keeping those of its prefixes if `keep`.
    fn fingerprint(&mut self, s: &str, keep: bool) -> (u64, u64) {
        let (mut fp, mut pow) = (0u64, 1u64);
        if keep {
            self.prefixes.reserve(s.len());
        }
        for &b in s.as_bytes() {
            fp = joined(fp, b as u64 + 1, BASE);
            pow = pow.wrapping_mul(BASE);
            if keep {
                self.prefixes.push(fp);
            }
        }
        (fp, pow)
    }

    /// Whether the string of length `len` and fingerprint `fp` may start string `whole`,
    /// which a get returned: false only when it surely does not. Equal strings have equal
    /// fingerprints, so a mismatch is proof; a match is taken on trust (a collision only
    /// keeps a dead end for the search to find).
    #[inline]
    pub fn may_start(&self, len: u64, fp: u64, whole: u32) -> bool {
        let mw = &self.meta[whole as usize];
        if len > mw.len {
            return false;
        }
        match mw.node {
            Node::Given(g) if len > 0 => {
                let at = self.given[g as usize].prefixes;
                at == NONE || self.prefixes[at as usize + len as usize - 1] == fp
            }
            _ => true,
        }
    }

    /// The id of `a` followed by the given string `b`, creating it on first use.
    pub fn concat(&mut self, a: u32, b: u32) -> u32 {
        let (ma, mb) = (self.meta[a as usize], self.meta[b as usize]);
        let len = ma.len + mb.len;
        let fp = joined(ma.fp, mb.fp, mb.pow);
        if let Some(&first) = self.by_fp.get(&(len, fp)) {
            let text = self.text(a) + self.piece(b);
            let mut id = first;
            while id != NONE {
                if self.equals(id, &text) {
                    return id;
                }
                id = self.meta[id as usize].same;
            }
        }
        self.add(Node::Concat(a, b), len, fp, ma.pow.wrapping_mul(mb.pow))
    }
}
