//! Jepsen's `jepsen.util` log lines: `INFO  jepsen.util - <process> :<type> :<f> <value>`.

use super::edn::{Edn, Reader};
use super::error::ImportError;
use super::jepsen_op::{into_history, op_f, JepsenEvent};
use super::pair::Kind;
use super::Imported;

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
/// are the nemesis's; a process number that no client can have is an error naming its line.
pub fn parse(text: &str) -> Result<Imported, ImportError> {
    let mut events = Vec::new();
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
        // A client process is a non-negative integer; the nemesis and other named processes
        // (`:nemesis`) are skipped. A number that is no client process (negative, or past
        // u64) is an error: skipping it would drop the line's operation from the check.
        let process = match process.parse::<i128>() {
            Ok(p) => u64::try_from(p).map_err(|_| {
                err(format!(
                    "process {p}; allowed: an integer from 0 to {} (a client), or a name such as :nemesis",
                    u64::MAX
                ))
            })?,
            Err(_) => continue,
        };
        let f = op_f(f).map_err(err)?;
        // The value is the first EDN form after the operation; Jepsen may log more after it.
        let edn = Reader::new(value, lineno)
            .next_form()
            .map_err(|e| err(e.message))?
            .map_or(Edn::Nil, |(_, v)| v);
        // Jepsen logs a timed-out read as `:fail :read :timed-out`; its outcome is unknown,
        // not a definite failure.
        if kind == Kind::Fail && edn == Edn::Keyword("timed-out".into()) {
            kind = Kind::Info;
        }
        events.push(JepsenEvent {
            process,
            kind,
            f,
            key: None,
            value: edn,
            lease_ms: None,
            // Line numbers order the events and are what a reader looks up.
            pos: lineno as u64,
            time_ns: lineno as u64,
            line: lineno,
        });
    }
    into_history(FORMAT, events)
}
