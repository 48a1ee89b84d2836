//! The `kv` model: independent string keys, each initially empty, with get, put and append.
//! Split per key. Strings are interned (`kv_strings`) so a state is a small id and an append is
//! a table lookup after its first evaluation, instead of an allocation on every search step.
//! Appends grow a string and a get reads one, so a string that does not start what the next
//! get read is a dead end (see [`Spec::can_grow_into`]), told by one fingerprint comparison.

use super::error::ModelError;
use super::kv_strings::{joined, Strings};
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

/// The specification of one key.
#[derive(Clone)]
pub struct KvSpec {
    ops: Vec<KvOp>,
    strings: Strings,
    /// (string, appended argument) -> the result, once evaluated.
    appended: HashMap<(u32, u32), u32, FastBuild>,
}

impl KvSpec {
    /// Whether the get `read` may read a string that the string of length `len` and
    /// fingerprint `fp` grows into.
    #[inline]
    fn may_read(&self, len: u64, fp: u64, read: usize) -> bool {
        match self.ops[read] {
            KvOp::Get(v) => self.strings.may_start(len, fp, v),
            _ => true,
        }
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
            KvOp::Append(v) => Some(
                *self
                    .appended
                    .entry((*state, v))
                    .or_insert_with(|| self.strings.concat(*state, v)),
            ),
        }
    }

    fn read_only(&self, op: usize) -> bool {
        matches!(self.ops[op], KvOp::Get(_))
    }

    fn grows(&self, op: usize) -> bool {
        matches!(self.ops[op], KvOp::Append(_))
    }

    /// Appends only extend a string: `state` grows into what a get read only if it starts it.
    fn can_grow_into(&self, state: &u32, read: usize) -> bool {
        let m = self.strings.meta(*state);
        self.may_read(m.len, m.fp, read)
    }

    /// Tells a dead append from the fingerprint of its string, before building the string.
    #[inline]
    fn step_toward(&mut self, state: &u32, op: usize, read: Option<usize>) -> Option<u32> {
        if let (KvOp::Append(v), Some(read)) = (self.ops[op], read) {
            let (ms, mv) = (self.strings.meta(*state), self.strings.meta(v));
            if !self.may_read(ms.len + mv.len, joined(ms.fp, mv.fp, mv.pow), read) {
                return None;
            }
            return self.step(state, op);
        }
        let next = self.step(state, op)?;
        match read {
            Some(r) if !self.can_grow_into(&next, r) => None,
            _ => Some(next),
        }
    }

    fn effect_key(&self, op: usize) -> Option<u64> {
        match self.ops[op] {
            KvOp::Get(_) => None,
            KvOp::Put(v) => Some(hash_one(&(1u8, v))),
            KvOp::Append(v) => Some(hash_one(&(2u8, v))),
        }
    }

    fn describe(&self, state: &u32) -> String {
        format!("value = {:?}", self.strings.text(*state))
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
        let mut spec = KvSpec {
            ops: Vec::with_capacity(idx.len()),
            strings: Strings::new(),
            appended: HashMap::default(),
        };
        for &i in &idx {
            let op = &history.ops[i];
            let bad = |why: &str| ModelError::new(model, i, op, why);
            if op.key.is_none() {
                return Err(bad("kv operations need a key"));
            }
            let k = match op.f {
                OpF::Get => {
                    let out = op.out.as_ref().expect("unknown gets were dropped");
                    KvOp::Get(
                        spec.strings
                            .intern(text(out).ok_or_else(|| bad("get returns a string"))?, true),
                    )
                }
                OpF::Put => KvOp::Put(spec.strings.intern(
                    text(&op.arg).ok_or_else(|| bad("put takes a string"))?,
                    false,
                )),
                OpF::Append => KvOp::Append(spec.strings.intern(
                    text(&op.arg).ok_or_else(|| bad("append takes a string"))?,
                    false,
                )),
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
