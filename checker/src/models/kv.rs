//! The `kv` model: independent string keys, each initially empty, with get, put and append.
//! Split per key. Strings are interned so a state is a small id and an append is a table
//! lookup after its first evaluation, instead of an allocation on every search step.

use super::error::ModelError;
use super::model::Model;
use super::split::by_key;
use crate::lin_search::hash::{hash_one, FastBuild};
use crate::lin_search::{check_parts, Budget, Datum, History, LinReport, OpF, Part, Spec};
use std::collections::HashMap;

/// `kv`: independent string keys with get, put and append.
pub static KV: KvModel = KvModel;

/// The kv model.
pub struct KvModel;

impl Model for KvModel {
    fn name(&self) -> &'static str {
        "kv"
    }

    fn takes(&self) -> &'static [OpF] {
        &[OpF::Get, OpF::Put, OpF::Append]
    }

    fn passes_over(&self) -> &'static [OpF] {
        &[]
    }

    fn check(&self, history: &History, budget: &Budget) -> Result<LinReport, ModelError> {
        let parts = parts(self.name(), history)?;
        Ok(check_parts(self.name(), history, parts, budget))
    }
}

#[derive(Debug, Clone, Copy)]
enum KvOp {
    /// A get that returned the string with this id.
    Get(u32),
    Put(u32),
    Append(u32),
}

/// Polynomial fingerprint modulus (2^61 - 1) and base.
const P: u64 = (1 << 61) - 1;
const BASE: u64 = 0x1f3d_5b79_a3c1_e2d7 % P;

fn mul_mod(a: u64, b: u64) -> u64 {
    let x = (a as u128) * (b as u128);
    let r = ((x & P as u128) + (x >> 61)) as u64;
    if r >= P {
        r - P
    } else {
        r
    }
}

fn add_mod(a: u64, b: u64) -> u64 {
    let r = a + b;
    if r >= P {
        r - P
    } else {
        r
    }
}

/// A string the search has met: given whole (a get's result, an argument) or as an earlier
/// string with a piece appended, so a new state costs no copy of the text.
#[derive(Debug, Clone, Copy)]
enum Node {
    Flat(u32),
    Concat(u32, u32),
}

#[derive(Debug, Clone, Copy)]
struct Meta {
    node: Node,
    len: u64,
    fp: u64,
    /// BASE^len mod P, to extend fingerprints on the right.
    pow: u64,
    /// Next string with the same length and fingerprint, or `NONE`.
    same: u32,
}

const NONE: u32 = u32::MAX;

/// The specification of one key. Each distinct string has exactly one id (fingerprints find
/// candidates, text comparison decides), so states compare as integers.
#[derive(Clone)]
pub struct KvSpec {
    ops: Vec<KvOp>,
    texts: Vec<Box<str>>,
    meta: Vec<Meta>,
    /// First string with a given length and fingerprint.
    by_fp: HashMap<(u64, u64), u32, FastBuild>,
    appended: HashMap<(u32, u32), u32, FastBuild>,
}

impl KvSpec {
    fn new() -> Self {
        let mut s = KvSpec {
            ops: Vec::new(),
            texts: Vec::new(),
            meta: Vec::new(),
            by_fp: HashMap::default(),
            appended: HashMap::default(),
        };
        s.intern("");
        s
    }

    /// The full text of string `id`.
    fn text(&self, id: u32) -> String {
        let mut pieces = Vec::new();
        let mut cur = id;
        loop {
            match self.meta[cur as usize].node {
                Node::Flat(t) => {
                    pieces.push(&*self.texts[t as usize]);
                    break;
                }
                Node::Concat(a, b) => {
                    pieces.push(self.text_ref(b));
                    cur = a;
                }
            }
        }
        pieces.reverse();
        pieces.concat()
    }

    /// Texts of flat strings (arguments are always interned flat).
    fn text_ref(&self, id: u32) -> &str {
        match self.meta[id as usize].node {
            Node::Flat(t) => &self.texts[t as usize],
            Node::Concat(..) => unreachable!("appended pieces are flat"),
        }
    }

    /// The id of an existing string equal to `text` with this length and fingerprint.
    fn find(&self, len: u64, fp: u64, text: &str) -> Option<u32> {
        let mut id = *self.by_fp.get(&(len, fp))?;
        while id != NONE {
            if self.text(id) == text {
                return Some(id);
            }
            id = self.meta[id as usize].same;
        }
        None
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

    fn intern(&mut self, s: &str) -> u32 {
        let (mut fp, mut pow) = (0u64, 1u64);
        for &b in s.as_bytes() {
            fp = add_mod(mul_mod(fp, BASE), b as u64 + 1);
            pow = mul_mod(pow, BASE);
        }
        let len = s.len() as u64;
        if let Some(id) = self.find(len, fp, s) {
            return id;
        }
        let t = self.texts.len() as u32;
        self.texts.push(s.into());
        self.add(Node::Flat(t), len, fp, pow)
    }

    /// The id of `a` followed by `b`, creating it on first use.
    fn concat(&mut self, a: u32, b: u32) -> u32 {
        let (ma, mb) = (self.meta[a as usize], self.meta[b as usize]);
        let len = ma.len + mb.len;
        let fp = add_mod(mul_mod(ma.fp, mb.pow), mb.fp);
        if self.by_fp.contains_key(&(len, fp)) {
            let text = self.text(a) + self.text_ref(b);
            if let Some(id) = self.find(len, fp, &text) {
                return id;
            }
        }
        self.add(Node::Concat(a, b), len, fp, mul_mod(ma.pow, mb.pow))
    }
}

impl Spec for KvSpec {
    /// Id of the key's current string; equal strings have equal ids.
    type State = u32;

    fn init(&mut self) -> u32 {
        0
    }

    #[inline]
    fn step(&mut self, state: &u32, op: usize) -> Option<u32> {
        match self.ops[op] {
            KvOp::Get(v) => (*state == v).then_some(v),
            KvOp::Put(v) => Some(v),
            KvOp::Append(v) => {
                if let Some(&r) = self.appended.get(&(*state, v)) {
                    return Some(r);
                }
                let r = self.concat(*state, v);
                self.appended.insert((*state, v), r);
                Some(r)
            }
        }
    }

    fn read_only(&self, op: usize) -> bool {
        matches!(self.ops[op], KvOp::Get(_))
    }

    fn effect_key(&self, op: usize) -> Option<u64> {
        match self.ops[op] {
            KvOp::Get(_) => None,
            KvOp::Put(v) => Some(hash_one(&(1u8, v))),
            KvOp::Append(v) => Some(hash_one(&(2u8, v))),
        }
    }

    fn describe(&self, state: &u32) -> String {
        format!("value = {:?}", self.text(*state))
    }
}

fn text(d: &Datum) -> Option<&str> {
    match d {
        Datum::Str(s) => Some(s),
        Datum::Nil => Some(""),
        _ => None,
    }
}

/// Prepares one part per key. Gets with an unknown result are dropped.
fn parts(model: &'static str, history: &History) -> Result<Vec<Part<KvSpec>>, ModelError> {
    let split = by_key(history, |i| {
        let op = &history.ops[i];
        !(op.f == OpF::Get && op.out.is_none())
    });
    let mut parts = Vec::with_capacity(split.len());
    for (key, idx) in split {
        let mut spec = KvSpec::new();
        for &i in &idx {
            let op = &history.ops[i];
            let bad = |why: &str| ModelError::new(model, i, op, why);
            if op.key.is_none() {
                return Err(bad("kv operations need a key"));
            }
            let k = match op.f {
                OpF::Get => {
                    let out = op.out.as_ref().expect("unknown gets were dropped");
                    KvOp::Get(spec.intern(text(out).ok_or_else(|| bad("get returns a string"))?))
                }
                OpF::Put => {
                    KvOp::Put(spec.intern(text(&op.arg).ok_or_else(|| bad("put takes a string"))?))
                }
                OpF::Append => KvOp::Append(
                    spec.intern(text(&op.arg).ok_or_else(|| bad("append takes a string"))?),
                ),
                _ => return Err(bad("the model has no such operation")),
            };
            spec.ops.push(k);
        }
        parts.push(Part {
            label: format!("key {key:?}"),
            ops: idx,
            spec,
        });
    }
    Ok(parts)
}
