//! Naming the field of a line that does not parse as a server event, and what that field
//! allows. Runs only on the error path, so the reader's fast path stays one typed parse.

use super::error::RecordProblem;
use super::event::{RecordChange, SERVER_RECORD_VERSION};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value as Json};

type Probe = fn(&Json) -> Result<(), serde_json::Error>;

fn probe<T: DeserializeOwned>(v: &Json) -> Result<(), serde_json::Error> {
    T::deserialize(v).map(|_| ())
}

const NON_NEGATIVE: &str = "an integer from 0 to 2^64-1";

/// Every field: name, required, what is allowed, check.
fn fields() -> Vec<(&'static str, bool, String, Probe)> {
    vec![
        (
            "v",
            true,
            format!("an integer from 1 to {SERVER_RECORD_VERSION}"),
            probe::<u32>,
        ),
        ("index", true, NON_NEGATIVE.into(), probe::<u64>),
        ("time_ns", true, NON_NEGATIVE.into(), probe::<u64>),
        (
            "node",
            true,
            "a node name (n1, n2, …)".into(),
            probe::<String>,
        ),
        (
            "key",
            true,
            "the record's name on the server (a string), or \"*\" for a reset".into(),
            probe::<String>,
        ),
        (
            "event",
            true,
            RecordChange::ALL.map(RecordChange::name).join(", "),
            probe::<RecordChange>,
        ),
        (
            "value",
            false,
            "the owner as the server stores it (a string)".into(),
            probe::<String>,
        ),
        ("ttl_ms", false, NON_NEGATIVE.into(), probe::<u64>),
    ]
}

fn what(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// Why `text`, which failed to parse as a server event with `err`, is not one.
pub(crate) fn diagnose(text: &str, err: &serde_json::Error) -> RecordProblem {
    let obj: Map<String, Json> = match serde_json::from_str::<Json>(text) {
        Ok(Json::Object(m)) => m,
        Ok(other) => {
            return RecordProblem::NotJson {
                message: format!("found {}", what(&other)),
            }
        }
        Err(e) => {
            return RecordProblem::NotJson {
                message: e.to_string(),
            }
        }
    };
    let fields = fields();
    if let Some(unknown) = obj
        .keys()
        .find(|k| !fields.iter().any(|(name, ..)| name == k))
    {
        let names: Vec<&str> = fields.iter().map(|f| f.0).collect();
        return RecordProblem::field(
            unknown,
            "not a field of the server record".into(),
            format!("the fields {}", names.join(", ")),
        );
    }
    for (name, required, allowed, check) in fields {
        match obj.get(name) {
            None if required => return RecordProblem::field(name, "missing".into(), allowed),
            None => {}
            Some(v) => {
                if let Err(e) = check(v) {
                    return RecordProblem::field(name, format!("{e} (found {v})"), allowed);
                }
            }
        }
    }
    RecordProblem::NotJson {
        message: err.to_string(),
    }
}
