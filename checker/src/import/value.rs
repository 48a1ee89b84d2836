//! Turning EDN values into operation arguments and results.

use super::edn::Edn;
use crate::lin_search::Datum;

/// An argument or result: nil, an integer, a `[from to]` pair or a string.
pub fn datum(e: &Edn) -> Result<Datum, String> {
    let unsupported = || {
        format!(
            "unsupported value {}; the models take nil, an integer, a string or a [from to] pair of integers",
            e.brief(60)
        )
    };
    Ok(match e {
        Edn::Nil => Datum::Nil,
        Edn::Int(i) => Datum::Int(*i),
        Edn::Str(s) => Datum::Str(s.as_str().into()),
        Edn::Vector(v) | Edn::List(v) => match v.as_slice() {
            [Edn::Int(a), Edn::Int(b)] => Datum::Pair(*a, *b),
            _ => return Err(unsupported()),
        },
        Edn::BigInt(n) => {
            return Err(format!(
                "the integer {n} is outside the 64-bit range the models take"
            ))
        }
        Edn::Bool(_)
        | Edn::Float(_)
        | Edn::Keyword(_)
        | Edn::Symbol(_)
        | Edn::Char(_)
        | Edn::Set(_)
        | Edn::Map(_)
        | Edn::Tagged(..) => return Err(unsupported()),
    })
}
