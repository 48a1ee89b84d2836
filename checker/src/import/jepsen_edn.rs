//! Jepsen op maps in EDN: one map per line, or a `history.edn` holding a vector of maps.

use super::edn::{parse_all, Edn};
use super::error::ImportError;
use super::pair::{Kind, Pairer, RawEvent};
use super::value::datum;
use crate::lin::{Datum, History, OpF};

const FORMAT: &str = "jepsen edn";

/// Parses the text. Ops of non-integer processes (the nemesis) are skipped. Positions are op
/// numbers; `:time` (ns), when present, gives the real time.
pub fn parse(text: &str) -> Result<History, ImportError> {
    let trimmed = text.trim_start();
    let vector = trimmed.starts_with('[') || trimmed.starts_with('(');
    let ops: Vec<(usize, Edn)> = if vector {
        let forms = parse_all(text).map_err(|message| ImportError::Parse {
            format: FORMAT,
            line: 1,
            message,
        })?;
        match forms.into_iter().next() {
            Some(Edn::Vector(v)) | Some(Edn::List(v)) => {
                v.into_iter().enumerate().map(|(i, e)| (i + 1, e)).collect()
            }
            _ => Vec::new(),
        }
    } else {
        let mut out = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let forms = parse_all(line).map_err(|message| ImportError::Parse {
                format: FORMAT,
                line: n + 1,
                message,
            })?;
            out.extend(forms.into_iter().map(|e| (n + 1, e)));
        }
        out
    };
    let mut pairer = Pairer::new(FORMAT);
    for (index, (line, op)) in ops.into_iter().enumerate() {
        // Jepsen's :index when given; else line numbers when there is one op per line (what
        // a reader looks up), else the op's place in the vector.
        let pos = match op.get("index") {
            Some(Edn::Int(i)) if *i >= 0 => *i as usize,
            _ if vector => index,
            _ => line,
        };
        let err = |message: String| ImportError::Parse {
            format: FORMAT,
            line,
            message,
        };
        let Some(Edn::Int(process)) = op.get("process") else {
            continue;
        };
        let process = u64::try_from(*process).map_err(|_| err("negative process".into()))?;
        let kind = match op.get("type") {
            Some(Edn::Keyword(t)) => {
                Kind::from_name(t).ok_or_else(|| err(format!("unknown type :{t}")))?
            }
            other => return Err(err(format!("missing or bad :type {other:?}"))),
        };
        let f = match op.get("f") {
            Some(Edn::Keyword(f)) => {
                OpF::from_name(f).ok_or_else(|| err(format!("unknown operation :{f}")))?
            }
            other => return Err(err(format!("missing or bad :f {other:?}"))),
        };
        let key = match op.get("key") {
            None | Some(Edn::Nil) => None,
            Some(Edn::Str(s)) | Some(Edn::Keyword(s)) | Some(Edn::Symbol(s)) => Some(s.clone()),
            Some(Edn::Int(i)) => Some(i.to_string()),
            Some(other) => return Err(err(format!("unsupported :key {other:?}"))),
        };
        let value = match (kind, op.get("value")) {
            (Kind::Info | Kind::Fail, _) | (_, None) => Datum::Nil,
            (_, Some(v)) => datum(v).map_err(err)?,
        };
        // lockpick's export carries the lease asked for beside Jepsen's usual keys.
        let value = match (kind, f, op.get("lease-ms")) {
            (Kind::Invoke, OpF::Acquire | OpF::Renew, Some(Edn::Int(ms))) => Datum::Int(*ms),
            _ => value,
        };
        let time_ns = match op.get("time") {
            Some(Edn::Int(t)) if *t >= 0 => *t as u64,
            _ => pos as u64,
        };
        pairer.push(RawEvent {
            process,
            kind,
            f,
            key,
            value,
            pos: pos as u64,
            time_ns,
            line,
        })?;
    }
    Ok(pairer.finish())
}
