//! The result of a linearizability check and how it reads in a terminal.

use super::op::{History, Op};
use super::shrink::Shrunk;
use crate::verdict::Verdict;
use std::fmt;
use std::time::Duration;

/// Verdict, cost and, for a violation, the evidence.
#[derive(Debug, Clone)]
pub struct LinReport {
    pub model: String,
    pub verdict: Verdict,
    /// Time taken to decide.
    pub elapsed: Duration,
    /// Time then spent narrowing a violation down (zero unless invalid).
    pub explain_elapsed: Duration,
    /// Operations in the history (after dropping those that certainly did not happen).
    pub ops: usize,
    /// Independent parts the model split the history into.
    pub parts: usize,
    /// Operations the model passed over: the protected resource's reads and writes beside a
    /// lock's operations (see [`crate::models::Model::passes_over`]).
    pub passed_over: usize,
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
    /// The operation whose return makes the history non-linearizable: the shortest failing
    /// prefix of the part ends with it. `None` if it could not be narrowed down.
    pub culprit: Option<Op>,
    /// The smallest window found: the culprit and every operation overlapping it in real
    /// time, in invocation order. No order of these fits the model after the prefix.
    pub window: Vec<Op>,
    /// The operations that force the violation: without any one of them, the history up to
    /// the culprit's return is linearizable (see [`super::shrink::Shrunk::forcing`]).
    pub forced_by: Vec<Op>,
    /// The longest linearizable prefix found (of the shortest failing prefix), in
    /// linearization order.
    pub prefix: Vec<Op>,
    /// The model state after that prefix.
    pub state: String,
    /// The operations that would have to come next there, none of which can (see
    /// [`super::search::Failure::pending`]), in invocation order.
    pub pending: Vec<Op>,
}

impl Violation {
    pub(crate) fn new(part: String, history: &History, s: Shrunk) -> Violation {
        let ops = |v: &[usize]| v.iter().map(|&i| history.ops[i].clone()).collect();
        Violation {
            part,
            culprit: s.culprit.map(|i| history.ops[i].clone()),
            window: ops(&s.window),
            forced_by: ops(&s.forcing),
            prefix: ops(&s.failure.prefix),
            state: s.failure.state,
            pending: ops(&s.failure.pending),
        }
    }
}

/// How many operations of the prefix to print before the failure point.
const PREFIX_TAIL: usize = 8;

impl fmt::Display for LinReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "linearizability ({}): {} in {:.3} ms ({} ops, {} part{})",
            self.model,
            self.verdict,
            self.elapsed.as_secs_f64() * 1e3,
            self.ops,
            self.parts,
            plural(self.parts)
        )?;
        if !self.explain_elapsed.is_zero() {
            write!(
                f,
                "; {:.3} ms more to narrow it down",
                self.explain_elapsed.as_secs_f64() * 1e3
            )?;
        }
        writeln!(f)?;
        if self.passed_over > 0 {
            writeln!(
                f,
                "  not checked by this model: {} read/write op{} of the protected resource (the lock checks read those)",
                self.passed_over,
                plural(self.passed_over)
            )?;
        }
        if let Some(r) = &self.unknown_reason {
            writeln!(f, "  undecided: {r}")?;
        }
        if let Some(v) = &self.violation {
            writeln!(f, "  in {}: no linearization exists.", v.part)?;
            if let Some(c) = &v.culprit {
                writeln!(
                    f,
                    "  the first operation after which no linearization exists (the history stops being linearizable when it returns):"
                )?;
                writeln!(f, "    {c}")?;
                if !v.forced_by.is_empty() {
                    writeln!(
                        f,
                        "  forced by: without any one of these {} op{}, the history up to it is linearizable:",
                        v.forced_by.len(),
                        plural(v.forced_by.len())
                    )?;
                    for op in &v.forced_by {
                        writeln!(f, "    {op}")?;
                    }
                }
            }
            writeln!(
                f,
                "  window: {} op{} overlapping it in time; no order of them fits ([invoked..returned] as lines or event indices):",
                v.window.len(),
                plural(v.window.len())
            )?;
            for op in &v.window {
                writeln!(f, "    {op}")?;
            }
            writeln!(
                f,
                "  longest linearizable prefix: {} op{}{}",
                v.prefix.len(),
                plural(v.prefix.len()),
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
                "  none of these {} op{} can take effect next:",
                v.pending.len(),
                plural(v.pending.len())
            )?;
            for op in &v.pending {
                writeln!(f, "    {op}")?;
            }
        }
        Ok(())
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
