//! A history as the linearizability checker sees it: completed or open operations with their
//! arguments, results and real-time interval, independent of the file format it came from.

use std::fmt;

/// What an operation does. Register, key-value and lock verbs share one enum so every importer
/// produces the same type and every model picks the verbs it understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpF {
    Read,
    Write,
    Cas,
    Get,
    Put,
    Append,
    Acquire,
    Release,
    Renew,
}

impl OpF {
    /// The verb as Jepsen and lockpick write it.
    pub fn name(self) -> &'static str {
        match self {
            OpF::Read => "read",
            OpF::Write => "write",
            OpF::Cas => "cas",
            OpF::Get => "get",
            OpF::Put => "put",
            OpF::Append => "append",
            OpF::Acquire => "acquire",
            OpF::Release => "release",
            OpF::Renew => "renew",
        }
    }

    /// Parses a verb name (without Jepsen's leading colon).
    pub fn from_name(name: &str) -> Option<OpF> {
        Some(match name {
            "read" => OpF::Read,
            "write" => OpF::Write,
            "cas" => OpF::Cas,
            "get" => OpF::Get,
            "put" => OpF::Put,
            "append" => OpF::Append,
            "acquire" => OpF::Acquire,
            "release" => OpF::Release,
            "renew" => OpF::Renew,
            _ => return None,
        })
    }
}

impl fmt::Display for OpF {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An argument or a result.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Datum {
    /// Nothing, or Jepsen's `nil` (an unwritten register).
    #[default]
    Nil,
    Int(i64),
    /// Compare-and-set `[from to]`.
    Pair(i64, i64),
    /// Boxed to one pointer pair: a history holds millions of these.
    Str(Box<str>),
}

impl fmt::Display for Datum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Datum::Nil => f.write_str("nil"),
            Datum::Int(i) => write!(f, "{i}"),
            Datum::Pair(a, b) => write!(f, "[{a} {b}]"),
            Datum::Str(s) => write!(f, "{s:?}"),
        }
    }
}

/// One operation: an invocation paired with its completion, if any.
///
/// `call`/`ret` are positions in the source history (event or line numbers) and define the
/// real-time order: `a` precedes `b` iff `a.ret < b.call`. `call_ns`/`ret_ns` are wall-clock
/// times, used only by time-aware models (the lease); importers without clocks set them to the
/// positions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    pub process: u64,
    pub f: OpF,
    /// The key (kv) or lock name the operation is about, if any (boxed: two words, not
    /// three, per operation).
    pub key: Option<Box<str>>,
    /// Arguments: the value written, `[from to]` of a cas, the lease length in ms of an
    /// acquire or renew.
    pub arg: Datum,
    /// The result when the operation completed `ok`; `None` when its outcome is unknown
    /// (Jepsen `info`, or never completed). For reads, the value read; for an acquire, the
    /// fencing token granted (or `Nil`).
    pub out: Option<Datum>,
    pub call: u64,
    /// `None` when the operation never returned: it may take effect at any time after `call`,
    /// or never.
    pub ret: Option<u64>,
    pub call_ns: u64,
    pub ret_ns: Option<u64>,
}

impl Op {
    /// True when the operation has no known completion.
    pub fn is_open(&self) -> bool {
        self.out.is_none() || self.ret.is_none()
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "process {} {}", self.process, self.f)?;
        if let Some(k) = &self.key {
            write!(f, " {k:?}")?;
        }
        let lock = matches!(self.f, OpF::Acquire | OpF::Renew | OpF::Release);
        match (&self.arg, lock) {
            (Datum::Nil, _) => {}
            (Datum::Int(ms), true) => write!(f, " (lease {ms} ms)")?,
            (d, _) => write!(f, " {d}")?,
        }
        match (&self.out, lock) {
            (None, _) => f.write_str(" -> ? (unknown outcome)")?,
            (Some(Datum::Int(t)), true) => write!(f, " -> ok, token {t}")?,
            (Some(Datum::Nil), _) if self.f != OpF::Read => f.write_str(" -> ok")?,
            (Some(d), _) => write!(f, " -> {d}")?,
        }
        match self.ret {
            Some(r) if self.out.is_some() => write!(f, "  [{}..{}]", self.call, r),
            _ => write!(f, "  [{}..]", self.call),
        }
    }
}

/// The operations of a history, in invocation order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct History {
    pub ops: Vec<Op>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lock found violated is searched with all its operations held as these, and search
    /// states are kept per memo entry and stack frame: every word counts.
    #[test]
    fn operations_and_states_stay_small() {
        assert!(std::mem::size_of::<Datum>() <= 24);
        assert!(
            std::mem::size_of::<Op>() <= 128,
            "{}",
            std::mem::size_of::<Op>()
        );
        assert_eq!(std::mem::size_of::<crate::models::mutex::MutexState>(), 16);
        assert_eq!(std::mem::size_of::<crate::models::lease::LeaseState>(), 16);
    }
}
