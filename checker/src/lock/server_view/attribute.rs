//! Whose a value on the server is. A value belongs to process P when the history names it
//! P's holder value, or the owner value P's adapter reported, on a granted acquire of that
//! lock (an exact match, tried first), or else when it
//! was first set while exactly one process had an acquire or renewal of that lock open (from
//! its invocation to its completion, plus [`WATCH_LAG_NS`] for the watcher seeing it after
//! the client's reply) and no later set of it came while only other processes had one open.
//! Otherwise it is no one's, and the view says why: never a guess.
//!
//! Why the window is sound: the process that set a value had its acquire or renewal open
//! when the server set it, and the watcher saw it then or a little later, so that process is
//! among the candidates; widening the window only adds candidates, which can make a value
//! unattributed, never another process's. It assumes every writer of the lock's records is a
//! process of the history.

use super::inputs::ServerInputs;
use super::records::SetAt;
use super::WATCH_LAG_NS;
use crate::faults::secs;

/// Whose a value is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Owner {
    Process(u64),
    /// No one's, and why.
    Unknown(String),
}

impl Owner {
    pub fn process(&self) -> Option<u64> {
        match self {
            Owner::Process(p) => Some(*p),
            Owner::Unknown(_) => None,
        }
    }
}

fn list(ps: &[u64]) -> String {
    let names: Vec<String> = ps.iter().map(u64::to_string).collect();
    match names.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Whose `value` of lock `lock` is, given each of its sets in order.
pub(crate) fn owner(lock: u32, value: &str, sets: &[SetAt], inputs: &ServerInputs) -> Owner {
    if let Some(ps) = inputs.holders.get(&(lock, value.to_owned())) {
        return match ps.as_slice() {
            [p] => Owner::Process(*p),
            many => Owner::Unknown(format!(
                "the history names it the holder (or owner) value of processes {}",
                list(many)
            )),
        };
    }
    let Some(first) = sets.first() else {
        return Owner::Unknown("never set".into());
    };
    let at = |s: &SetAt| {
        format!(
            "at {} on {} (server record #{})",
            secs(s.ns),
            s.node,
            s.index
        )
    };
    let lag = WATCH_LAG_NS / 1_000_000;
    let p = match first.candidates.as_slice() {
        [p] => *p,
        [] => {
            return Owner::Unknown(format!(
                "it was first set {} while no process had an acquire or renewal of the lock open (nor had completed one within {lag} ms)",
                at(first)
            ))
        }
        many => {
            return Owner::Unknown(format!(
                "it was first set {} while processes {} all had an acquire or renewal of the lock open",
                at(first),
                list(many)
            ))
        }
    };
    for s in &sets[1..] {
        if !s.candidates.is_empty() && !s.candidates.contains(&p) {
            return Owner::Unknown(format!(
                "it was first set {} inside process {p}'s acquire or renewal, and set again {} while only process(es) {} had one open",
                at(first),
                at(s),
                list(&s.candidates)
            ));
        }
    }
    Owner::Process(p)
}
