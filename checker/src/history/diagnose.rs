//! Naming the field of a line that does not parse as an event, and what that field allows.
//! Runs only on the error path, so the reader's fast path stays one typed parse per line.

use super::error::LineProblem;
use super::event::{EventKind, Process, F, FORMAT_VERSION};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;

type Probe = fn(&Json) -> Result<(), serde_json::Error>;

fn probe<T: DeserializeOwned>(v: &Json) -> Result<(), serde_json::Error> {
    T::deserialize(v).map(|_| ())
}

const NON_NEGATIVE: &str = "an integer from 0 to 2^64-1";
const INTEGER: &str = "an integer from -2^63 to 2^63-1";
const STRING: &str = "a string";

/// The top-level fields: name, required, what is allowed, check.
fn fields() -> Vec<(&'static str, bool, String, Probe)> {
    vec![
        (
            "v",
            true,
            format!("an integer from 1 to {FORMAT_VERSION}"),
            probe::<u32>,
        ),
        ("index", true, NON_NEGATIVE.into(), probe::<u64>),
        ("time_ns", true, NON_NEGATIVE.into(), probe::<u64>),
        (
            "process",
            true,
            "a client process number (0 to 2^64-1) or \"nemesis\"".into(),
            probe::<Process>,
        ),
        (
            "type",
            true,
            "invoke, ok, fail, info".into(),
            probe::<EventKind>,
        ),
        ("f", true, F::ALL.map(F::name).join(", "), probe::<F>),
        ("lock", false, STRING.into(), probe::<Option<String>>),
        ("error", false, STRING.into(), probe::<Option<String>>),
    ]
}

/// The fields of `value`: name, what is allowed, check.
fn value_fields() -> Vec<(&'static str, &'static str, Probe)> {
    let u = |name| (name, NON_NEGATIVE, probe::<u64> as Probe);
    let i = |name| (name, INTEGER, probe::<i64> as Probe);
    let s = |name| (name, STRING, probe::<String> as Probe);
    vec![
        u("token"),
        u("max_token"),
        u("lease_ms"),
        s("holder"),
        s("owner"),
        i("int"),
        i("from"),
        i("to"),
        (
            "nodes",
            "an array of node names (strings)",
            probe::<Vec<String>>,
        ),
        u("client"),
        s("point"),
        u("ms"),
        u("jitter_ms"),
        (
            "per_node",
            "an object of node name to answer (strings)",
            probe::<BTreeMap<String, String>>,
        ),
        u("validity_ms"),
        u("replicas_acked"),
        i("offset_ms"),
        s("event"),
        s("note"),
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

fn field(name: &str, message: String, allowed: impl Into<String>) -> LineProblem {
    LineProblem::Field {
        field: name.to_string(),
        message,
        allowed: allowed.into(),
    }
}

/// Why `text`, which failed to parse as an event with `err`, is not one.
pub(crate) fn diagnose(text: &str, err: &serde_json::Error) -> LineProblem {
    let obj: Map<String, Json> = match serde_json::from_str::<Json>(text) {
        Ok(Json::Object(m)) => m,
        Ok(other) => {
            return LineProblem::NotJson {
                message: format!("found {}", what(&other)),
            }
        }
        Err(e) => {
            return LineProblem::NotJson {
                message: e.to_string(),
            }
        }
    };
    for (name, required, allowed, check) in fields() {
        match obj.get(name) {
            None if required => return field(name, "missing".into(), allowed),
            None => {}
            Some(v) => {
                if let Err(e) = check(v) {
                    return field(name, format!("{e} (found {v})"), allowed);
                }
            }
        }
    }
    if let Some(v) = obj.get("value") {
        let Some(m) = v.as_object() else {
            return field(
                "value",
                format!("found {}", what(v)),
                "an object of the fields in docs/history-format.md",
            );
        };
        for (name, allowed, check) in value_fields() {
            if let Some(Err(e)) = m.get(name).map(check) {
                let found = &m[name];
                return field(
                    &format!("value.{name}"),
                    format!("{e} (found {found})"),
                    allowed,
                );
            }
        }
    }
    LineProblem::NotJson {
        message: err.to_string(),
    }
}
