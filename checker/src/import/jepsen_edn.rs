//! Jepsen op maps in EDN, in every layout Jepsen and Knossos write them: one map per line
//! (`history.edn` of modern Jepsen, with `:index` and `:time`), a top-level vector or list of
//! maps spanning many lines (Knossos' test histories), `#jepsen.history.Op{…}` records, with
//! comments and discarded forms anywhere.

use super::edn::{Edn, EdnError, Reader};
use super::error::ImportError;
use super::jepsen_op::{into_history, op_f, JepsenEvent};
use super::pair::Kind;
use super::Imported;

const FORMAT: &str = "jepsen edn";

fn parse_err(e: EdnError) -> ImportError {
    ImportError::Parse {
        format: FORMAT,
        line: e.line,
        message: e.message,
    }
}

/// Every op form of the text with its line: the items of a top-level vector or list, or the
/// top-level forms themselves.
fn op_forms(text: &str) -> Result<Vec<(usize, Edn)>, ImportError> {
    let mut r = Reader::new(text, 1);
    let mut forms = Vec::new();
    match r.enter_seq().map_err(parse_err)? {
        Some(close) => {
            while let Some(item) = r.next_item(close).map_err(parse_err)? {
                forms.push(item);
            }
            if let Some((line, form)) = r.next_form().map_err(parse_err)? {
                return Err(ImportError::Parse {
                    format: FORMAT,
                    line,
                    message: format!(
                        "{} follows the history's vector; a history is one vector of op maps or op maps one after another",
                        form.brief(40)
                    ),
                });
            }
        }
        None => {
            while let Some(form) = r.next_form().map_err(parse_err)? {
                forms.push(form);
            }
        }
    }
    Ok(forms)
}

/// Parses the text. Ops of non-integer processes (the nemesis) are skipped. Positions are
/// Jepsen's `:index` when every op has one, else line numbers when each op has a line of its
/// own (what a reader looks up), else the op's place in the history; `:time` (ns), when
/// present, gives the real time.
pub fn parse(text: &str) -> Result<Imported, ImportError> {
    let forms = op_forms(text)?;
    let all_indexed = forms
        .iter()
        .all(|(_, op)| matches!(op.get("index"), Some(Edn::Int(i)) if *i >= 0));
    let own_lines = forms.windows(2).all(|w| w[0].0 < w[1].0);
    let mut events = Vec::new();
    for (n, (line, op)) in forms.into_iter().enumerate() {
        let err = |message: String| ImportError::Parse {
            format: FORMAT,
            line,
            message,
        };
        if !matches!(&op, Edn::Map(_))
            && !matches!(&op, Edn::Tagged(_, m) if matches!(**m, Edn::Map(_)))
        {
            return Err(err(format!(
                "expected an op map such as {{:process 0, :type :invoke, :f :read, :value nil}}, found {}",
                op.brief(60)
            )));
        }
        let pos = match op.get("index") {
            Some(Edn::Int(i)) if all_indexed => *i as u64,
            _ if own_lines => line as u64,
            _ => n as u64,
        };
        let process = match op.get("process") {
            Some(Edn::Int(p)) => {
                u64::try_from(*p).map_err(|_| err(format!("negative :process {p}")))?
            }
            // The nemesis (`:nemesis`) and other non-client processes.
            _ => continue,
        };
        let kind = match op.get("type") {
            Some(Edn::Keyword(t)) => Kind::from_name(t).ok_or_else(|| {
                err(format!(
                    "unknown :type :{t}; allowed: :invoke, :ok, :fail, :info"
                ))
            })?,
            Some(other) => return Err(err(format!("bad :type {}", other.brief(40)))),
            None => return Err(err("the op has no :type".into())),
        };
        let f = match op.get("f") {
            Some(Edn::Keyword(f)) => op_f(f).map_err(err)?,
            Some(other) => return Err(err(format!("bad :f {}", other.brief(40)))),
            None => return Err(err("the op has no :f".into())),
        };
        let key = match op.get("key") {
            None | Some(Edn::Nil) => None,
            Some(Edn::Str(s)) | Some(Edn::Keyword(s)) | Some(Edn::Symbol(s)) => Some(s.clone()),
            Some(Edn::Int(i)) => Some(i.to_string()),
            Some(other) => return Err(err(format!("unsupported :key {}", other.brief(40)))),
        };
        let lease_ms = match op.get("lease-ms") {
            Some(Edn::Int(ms)) => Some(*ms),
            _ => None,
        };
        let time_ns = match op.get("time") {
            Some(Edn::Int(t)) if *t >= 0 => *t as u64,
            _ => pos,
        };
        events.push(JepsenEvent {
            process,
            kind,
            f,
            key,
            value: op.get("value").cloned().unwrap_or(Edn::Nil),
            lease_ms,
            pos,
            time_ns,
            line,
        });
    }
    into_history(FORMAT, events)
}
