//! Turning EDN values into operation arguments and results.

use super::edn::Edn;
use crate::lin::Datum;

/// An argument or result: nil, an integer, a `[from to]` pair or a string.
pub fn datum(e: &Edn) -> Result<Datum, String> {
    Ok(match e {
        Edn::Nil => Datum::Nil,
        Edn::Int(i) => Datum::Int(*i),
        Edn::Str(s) => Datum::Str(s.clone()),
        Edn::Vector(v) | Edn::List(v) => match v.as_slice() {
            [Edn::Int(a), Edn::Int(b)] => Datum::Pair(*a, *b),
            _ => return Err(format!("unsupported value {e:?}")),
        },
        _ => return Err(format!("unsupported value {e:?}")),
    })
}
