//! Jepsen's `jepsen.util` log lines: `INFO  jepsen.util - <process> :<type> :<f> <value>`.

use super::edn::{parse_all, Edn};
use super::error::ImportError;
use super::pair::{Kind, Pairer, RawEvent};
use super::value::datum;
use crate::lin::{History, OpF};

const FORMAT: &str = "jepsen log";

/// True when `line` looks like an operation line of a Jepsen log.
pub fn looks_like(line: &str) -> bool {
    fields(line).is_some_and(|(_, t, _, _)| Kind::from_name(t).is_some())
}

/// Splits an operation line into process, type, f and value text.
fn fields(line: &str) -> Option<(&str, &str, &str, &str)> {
    let rest = match line.find(" - ") {
        Some(i) => &line[i + 3..],
        None => line,
    };
    let rest = rest.trim_start();
    let (process, rest) = rest.split_once(char::is_whitespace)?;
    let rest = rest.trim_start();
    let (t, rest) = rest.split_once(char::is_whitespace)?;
    let rest = rest.trim_start();
    let (f, value) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    Some((
        process,
        t.strip_prefix(':')?,
        f.strip_prefix(':')?,
        value.trim(),
    ))
}

/// Parses a whole log. Lines that are not operation lines (other log output) are skipped, as
/// are the nemesis's.
pub fn parse(text: &str) -> Result<History, ImportError> {
    let mut pairer = Pairer::new(FORMAT);
    for (n, line) in text.lines().enumerate() {
        let lineno = n + 1;
        let Some((process, t, f, value)) = fields(line) else {
            continue;
        };
        let Some(mut kind) = Kind::from_name(t) else {
            continue;
        };
        let err = |message: String| ImportError::Parse {
            format: FORMAT,
            line: lineno,
            message,
        };
        let Ok(process) = process.parse::<u64>() else {
            continue;
        };
        let f = OpF::from_name(f).ok_or_else(|| err(format!("unknown operation :{f}")))?;
        let forms = parse_all(value).map_err(err)?;
        let edn = forms.into_iter().next().unwrap_or(Edn::Nil);
        // Jepsen logs a timed-out read as `:fail :read :timed-out`; its outcome is unknown,
        // not a definite failure.
        if kind == Kind::Fail && edn == Edn::Keyword("timed-out".into()) {
            kind = Kind::Info;
        }
        let value = if kind == Kind::Info {
            crate::lin::Datum::Nil
        } else {
            datum(&edn).map_err(err)?
        };
        pairer.push(RawEvent {
            process,
            kind,
            f,
            key: None,
            value,
            // Line numbers order the events and are what a reader looks up.
            pos: lineno as u64,
            time_ns: lineno as u64,
            line: lineno,
        })?;
    }
    Ok(pairer.finish())
}
