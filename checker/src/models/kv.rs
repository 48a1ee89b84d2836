//! The `kv` model: independent string keys, each initially empty, with get, put and append.
//! Split per key. Strings are interned so a state is a small id and an append is a table
//! lookup after its first evaluation, instead of an allocation on every search step.

use super::error::ModelError;
use super::split::by_key;
use crate::lin::hash::FastBuild;
use crate::lin::{Datum, History, OpF, Part, Spec};
use std::collections::HashMap;

#[derive(Debug, Clone, Copy)]
enum KvOp {
    /// A get that returned the string with this id.
    Get(u32),
    Put(u32),
    Append(u32),
}

/// The specification of one key.
pub struct KvSpec {
    ops: Vec<KvOp>,
    strings: Vec<Box<str>>,
    ids: HashMap<Box<str>, u32, FastBuild>,
    appended: HashMap<(u32, u32), u32, FastBuild>,
}

impl KvSpec {
    fn new() -> Self {
        let mut s = KvSpec {
            ops: Vec::new(),
            strings: Vec::new(),
            ids: HashMap::default(),
            appended: HashMap::default(),
        };
        s.intern("");
        s
    }

    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.strings.len() as u32;
        self.strings.push(s.into());
        self.ids.insert(s.into(), id);
        id
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
                let joined = format!(
                    "{}{}",
                    self.strings[*state as usize], self.strings[v as usize]
                );
                let r = self.intern(&joined);
                self.appended.insert((*state, v), r);
                Some(r)
            }
        }
    }

    fn read_only(&self, op: usize) -> bool {
        matches!(self.ops[op], KvOp::Get(_))
    }

    fn describe(&self, state: &u32) -> String {
        format!("value = {:?}", self.strings[*state as usize])
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
pub fn parts(history: &History) -> Result<Vec<Part<KvSpec>>, ModelError> {
    let split = by_key(history, |i| {
        let op = &history.ops[i];
        !(op.f == OpF::Get && op.out.is_none())
    });
    let mut parts = Vec::with_capacity(split.len());
    for (key, idx) in split {
        let mut spec = KvSpec::new();
        for &i in &idx {
            let op = &history.ops[i];
            let bad = |why: &str| ModelError::new("kv", i, op, why);
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
