//! The result of a linearizability check and how it reads in a terminal.

use super::op::{History, Op};
use super::search::Failure;
use crate::verdict::Verdict;
use std::fmt;
use std::time::Duration;

/// Verdict, cost and, for a violation, the evidence.
#[derive(Debug, Clone)]
pub struct LinReport {
    pub model: String,
    pub verdict: Verdict,
    pub elapsed: Duration,
    /// Operations in the history (after dropping those that certainly did not happen).
    pub ops: usize,
    /// Independent parts the model split the history into.
    pub parts: usize,
    /// Present when the verdict is invalid.
    pub violation: Option<Violation>,
    /// Present when the verdict is unknown: which budget ran out.
    pub unknown_reason: Option<String>,
}

/// Why a part of the history cannot be linearized.
#[derive(Debug, Clone)]
pub struct Violation {
    /// The part: `register`, `key "3"`, `lock "l"`.
    pub part: String,
    /// The longest linearizable prefix found, in linearization order.
    pub prefix: Vec<Op>,
    /// The model state after that prefix.
    pub state: String,
    /// The operations that would have to come next, none of which can (see
    /// [`super::search::Failure::window`]), in invocation order.
    pub window: Vec<Op>,
}

impl Violation {
    pub(crate) fn new(part: String, history: &History, f: Failure) -> Violation {
        let ops = |v: &[usize]| v.iter().map(|&i| history.ops[i].clone()).collect();
        Violation {
            part,
            prefix: ops(&f.prefix),
            state: f.state,
            window: ops(&f.window),
        }
    }
}

/// How many operations of the prefix to print before the failure point.
const PREFIX_TAIL: usize = 8;

impl fmt::Display for LinReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "linearizability ({}): {} in {:.3} ms ({} ops, {} part{})",
            self.model,
            self.verdict,
            self.elapsed.as_secs_f64() * 1e3,
            self.ops,
            self.parts,
            if self.parts == 1 { "" } else { "s" }
        )?;
        if let Some(r) = &self.unknown_reason {
            writeln!(f, "  undecided: {r}")?;
        }
        if let Some(v) = &self.violation {
            writeln!(f, "  in {}: no linearization exists.", v.part)?;
            writeln!(
                f,
                "  longest linearizable prefix: {} op{}{}",
                v.prefix.len(),
                if v.prefix.len() == 1 { "" } else { "s" },
                if v.prefix.len() > PREFIX_TAIL {
                    format!(", the last {PREFIX_TAIL}:")
                } else {
                    ":".to_string()
                }
            )?;
            let skip = v.prefix.len().saturating_sub(PREFIX_TAIL);
            for op in &v.prefix[skip..] {
                writeln!(f, "    {op}")?;
            }
            writeln!(f, "  model state after it: {}", v.state)?;
            writeln!(
                f,
                "  none of these {} op{} can take effect next (positions are [invoked..returned]):",
                v.window.len(),
                if v.window.len() == 1 { "" } else { "s" }
            )?;
            for op in &v.window {
                writeln!(f, "    {op}")?;
            }
        }
        Ok(())
    }
}
