//! Jepsen's independent histories: every operation's value is a `[key value]` tuple
//! (`jepsen.independent`), and each key is a separate history, checked on its own
//! (P-compositionality).

use super::edn::Edn;
use super::jepsen_event::JepsenEvent;
use super::pair::Kind;
use crate::lin_search::OpF;

fn tuple(value: &Edn) -> Option<(&Edn, &Edn)> {
    match value {
        Edn::Vector(v) | Edn::List(v) => match v.as_slice() {
            [k, v] => Some((k, v)),
            _ => None,
        },
        _ => None,
    }
}

/// True when the history is independent: every client invocation's value is a `[key value]`
/// tuple. A history of compare-and-sets alone, whose `[from to]` are pairs of integers too, is
/// taken as a plain cas history: Jepsen's independent cas values are `[key [from to]]`.
pub fn detect(events: &[JepsenEvent]) -> bool {
    let mut invokes = events.iter().filter(|e| e.kind == Kind::Invoke).peekable();
    if invokes.peek().is_none() {
        return false;
    }
    let mut plain_cas_only = true;
    for e in invokes {
        let Some((k, v)) = tuple(&e.value) else {
            return false;
        };
        if key_name(k).is_none() {
            return false;
        }
        if !(e.f == OpF::Cas && matches!((k, v), (Edn::Int(_), Edn::Int(_)))) {
            plain_cas_only = false;
        }
    }
    !plain_cas_only
}

/// A key as text: integers, strings, keywords and symbols.
fn key_name(k: &Edn) -> Option<String> {
    match k {
        Edn::Int(i) => Some(i.to_string()),
        Edn::BigInt(s) | Edn::Str(s) | Edn::Keyword(s) | Edn::Symbol(s) => Some(s.clone()),
        _ => None,
    }
}

/// Splits an independent op's value into its key and its own value.
pub fn split(value: &Edn) -> Result<(String, &Edn), String> {
    tuple(value)
        .and_then(|(k, v)| Some((key_name(k)?, v)))
        .ok_or_else(|| {
            format!(
                "this history is independent (every invocation's value is a [key value] tuple) but this value is not one: {}",
                value.brief(60)
            )
        })
}
