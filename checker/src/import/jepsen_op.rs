//! A Jepsen operation event as both Jepsen formats (log lines, EDN op maps) give it, and how a
//! list of them becomes a history.

use super::error::ImportError;
use super::independent;
pub use super::jepsen_event::JepsenEvent;
use super::pair::{Kind, Pairer, RawEvent};
use super::value::datum;
use super::Imported;
use crate::lin_search::{Datum, OpF};

/// Pairs the events into operations, splitting an independent history's `[key value]` tuples
/// into keys. `fail` and `info` values are not read: Jepsen gives them no meaning.
pub fn into_history(
    format: &'static str,
    events: Vec<JepsenEvent>,
) -> Result<Imported, ImportError> {
    let independent = independent::detect(&events);
    let mut pairer = Pairer::new(format);
    for e in events {
        let err = |message: String| ImportError::Parse {
            format,
            line: e.line,
            message,
        };
        let meaningful = matches!(e.kind, Kind::Invoke | Kind::Ok);
        let (key, value) = if independent && meaningful {
            let (k, v) = independent::split(&e.value).map_err(err)?;
            (Some(k), v)
        } else {
            (e.key, &e.value)
        };
        let value = if meaningful {
            datum(value).map_err(err)?
        } else {
            Datum::Nil
        };
        let value = match (e.kind, e.f, e.lease_ms) {
            (Kind::Invoke, OpF::Acquire | OpF::Renew, Some(ms)) => Datum::Int(ms),
            _ => value,
        };
        pairer.push(RawEvent {
            process: e.process,
            kind: e.kind,
            f: e.f,
            key,
            value,
            pos: e.pos,
            time_ns: e.time_ns,
            line: e.line,
        })?;
    }
    Ok(pairer.finish())
}

/// The operation named by `:f`, or an error listing the ones lockpick's models take.
pub fn op_f(name: &str) -> Result<OpF, String> {
    OpF::from_name(name).ok_or_else(|| {
        format!(
            "unknown operation :{name}; lockpick's models take read, write, cas, get, put, append, acquire, release, renew"
        )
    })
}
