//! The `register` and `cas-register` models: one integer register, initially `nil`, with read,
//! write and (for cas-register) compare-and-set.

use super::error::ModelError;
use super::model::Model;
use super::split::by_key;
use crate::lin_search::hash::hash_one;
use crate::lin_search::{check_parts, Budget, Datum, History, LinReport, OpF, Part, Spec};

/// `register`: read and write.
pub static REGISTER: RegisterModel = RegisterModel {
    name: "register",
    cas: false,
};

/// `cas-register`: read, write and compare-and-set.
pub static CAS_REGISTER: RegisterModel = RegisterModel {
    name: "cas-register",
    cas: true,
};

/// The register models, with or without compare-and-set.
pub struct RegisterModel {
    name: &'static str,
    cas: bool,
}

impl Model for RegisterModel {
    fn name(&self) -> &'static str {
        self.name
    }

    fn takes(&self) -> &'static [OpF] {
        if self.cas {
            &[OpF::Read, OpF::Write, OpF::Cas]
        } else {
            &[OpF::Read, OpF::Write]
        }
    }

    fn passes_over(&self) -> &'static [OpF] {
        &[]
    }

    fn check(&self, history: &History, budget: &Budget) -> Result<LinReport, ModelError> {
        let parts = parts(self.name, history, self.cas)?;
        Ok(check_parts(self.name, history, parts, budget))
    }
}

#[derive(Debug, Clone, Copy)]
enum RegOp {
    /// A read that returned this value (`None` = nil).
    Read(Option<i64>),
    Write(i64),
    /// A compare-and-set that swapped, or whose outcome is unknown (then it either swapped or
    /// never took effect, and the search covers the latter).
    Cas(i64, i64),
}

/// The register specification for one history.
#[derive(Clone)]
pub struct RegisterSpec {
    ops: Vec<RegOp>,
}

impl Spec for RegisterSpec {
    type State = Option<i64>;

    fn init(&mut self) -> Option<i64> {
        None
    }

    #[inline]
    fn step(&mut self, state: &Option<i64>, op: usize) -> Option<Option<i64>> {
        match self.ops[op] {
            RegOp::Read(v) => (*state == v).then_some(v),
            RegOp::Write(v) => Some(Some(v)),
            RegOp::Cas(from, to) => (*state == Some(from)).then_some(Some(to)),
        }
    }

    fn read_only(&self, op: usize) -> bool {
        matches!(self.ops[op], RegOp::Read(_))
    }

    fn effect_key(&self, op: usize) -> Option<u64> {
        match self.ops[op] {
            RegOp::Read(_) => None,
            RegOp::Write(v) => Some(hash_one(&(1u8, v))),
            RegOp::Cas(a, b) => Some(hash_one(&(2u8, a, b))),
        }
    }

    fn describe(&self, state: &Option<i64>) -> String {
        match state {
            Some(v) => format!("register = {v}"),
            None => "register = nil".to_string(),
        }
    }
}

/// Prepares one part per key (Jepsen's independent registers; a history without keys is one
/// part). Reads with an unknown result are dropped: they neither constrain nor change the
/// register.
fn parts(
    model: &'static str,
    history: &History,
    cas: bool,
) -> Result<Vec<Part<RegisterSpec>>, ModelError> {
    let known = |i: usize| !(history.ops[i].f == OpF::Read && history.ops[i].out.is_none());
    let mut parts = Vec::new();
    for (key, idx) in by_key(history, known) {
        let mut ops = Vec::with_capacity(idx.len());
        for &i in &idx {
            let op = &history.ops[i];
            let bad = |why: &str| ModelError::new(model, i, op, why);
            ops.push(match (op.f, &op.arg, &op.out) {
                (OpF::Read, _, Some(Datum::Nil)) => RegOp::Read(None),
                (OpF::Read, _, None) => unreachable!("unknown reads were dropped"),
                (OpF::Read, _, Some(Datum::Int(v))) => RegOp::Read(Some(*v)),
                (OpF::Read, _, Some(_)) => return Err(bad("a read must return an integer or nil")),
                (OpF::Write, Datum::Int(v), _) => RegOp::Write(*v),
                (OpF::Write, _, _) => return Err(bad("a write needs an integer argument")),
                (OpF::Cas, Datum::Pair(a, b), _) if cas => RegOp::Cas(*a, *b),
                (OpF::Cas, _, _) if cas => return Err(bad("a cas needs a [from to] argument")),
                _ => return Err(bad("the model has no such operation")),
            });
        }
        parts.push(Part {
            label: if key.is_empty() {
                "register".to_string()
            } else {
                format!("key {key:?}")
            },
            ops: idx,
            spec: RegisterSpec { ops },
        });
    }
    Ok(parts)
}
