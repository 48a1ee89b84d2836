//! Toxic definitions in Toxiproxy 2.x's JSON shape, with the validation the API applies.

use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicU64, Ordering};

/// Direction of a toxic: `upstream` is client to server, `downstream` server to client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Upstream,
    Downstream,
}

impl Stream {
    fn parse(s: &str) -> Option<Stream> {
        match s {
            "upstream" => Some(Stream::Upstream),
            "downstream" => Some(Stream::Downstream),
            _ => None,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Stream::Upstream => "upstream",
            Stream::Downstream => "downstream",
        }
    }
}

/// What a toxic does. Units follow Toxiproxy: milliseconds, KB/s, bytes, and microseconds
/// for the slicer delay. Values are Toxiproxy's int64s: any of them is accepted as Toxiproxy
/// accepts it, and the engine reads a negative one as zero (no delay, no limit, no slicing),
/// which is what Toxiproxy does with it; huge ones saturate (a latency of `i64::MAX` ms holds
/// data as good as forever) instead of overflowing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToxicKind {
    /// Passes data unchanged (Toxiproxy's `noop`).
    Noop,
    Latency {
        latency: i64,
        jitter: i64,
    },
    /// `timeout <= 0` drops data until the toxic is removed; otherwise the connection is
    /// also closed after `timeout` ms.
    Timeout {
        timeout: i64,
    },
    Bandwidth {
        rate: i64,
    },
    SlowClose {
        delay: i64,
    },
    Slicer {
        average_size: i64,
        size_variation: i64,
        delay: i64,
    },
    LimitData {
        bytes: i64,
    },
}

/// Each toxic type with its attributes and their unit (for error messages).
const KINDS: &[(&str, &[(&str, &str)])] = &[
    ("noop", &[]),
    ("latency", &[("latency", "ms"), ("jitter", "ms")]),
    ("timeout", &[("timeout", "ms")]),
    ("bandwidth", &[("rate", "KB/s")]),
    ("slow_close", &[("delay", "ms")]),
    (
        "slicer",
        &[
            ("average_size", "bytes"),
            ("size_variation", "bytes"),
            ("delay", "microseconds"),
        ],
    ),
    ("limit_data", &[("bytes", "bytes")]),
];

impl ToxicKind {
    fn type_name(&self) -> &'static str {
        match self {
            ToxicKind::Noop => "noop",
            ToxicKind::Latency { .. } => "latency",
            ToxicKind::Timeout { .. } => "timeout",
            ToxicKind::Bandwidth { .. } => "bandwidth",
            ToxicKind::SlowClose { .. } => "slow_close",
            ToxicKind::Slicer { .. } => "slicer",
            ToxicKind::LimitData { .. } => "limit_data",
        }
    }

    fn attribute_values(&self) -> Vec<i64> {
        match *self {
            ToxicKind::Noop => vec![],
            ToxicKind::Latency { latency, jitter } => vec![latency, jitter],
            ToxicKind::Timeout { timeout } => vec![timeout],
            ToxicKind::Bandwidth { rate } => vec![rate],
            ToxicKind::SlowClose { delay } => vec![delay],
            ToxicKind::Slicer {
                average_size,
                size_variation,
                delay,
            } => vec![average_size, size_variation, delay],
            ToxicKind::LimitData { bytes } => vec![bytes],
        }
    }

    /// Builds a kind from its type name and attribute values; missing attributes take the
    /// base values (zero, as Go's decoder leaves them), unknown ones are ignored. A value
    /// that is not an integer in Toxiproxy's int64 range is refused, naming the attribute.
    fn build(
        type_name: &str,
        base: &[i64],
        attributes: &Map<String, Value>,
    ) -> Result<Self, ApiError> {
        let (_, names) = KINDS
            .iter()
            .find(|(t, _)| *t == type_name)
            .ok_or_else(|| ApiError::bad_request("invalid toxic type"))?;
        let mut values = Vec::with_capacity(names.len());
        for (i, (name, unit)) in names.iter().enumerate() {
            let value = match attributes.get(*name) {
                // Go's decoder leaves a field alone on null.
                None | Some(Value::Null) => base.get(i).copied().unwrap_or(0),
                Some(v) => v.as_i64().ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "bad request body: attribute {name} of a {type_name} toxic must be an \
                         integer number of {unit} in {}..={}, got {v}",
                        i64::MIN,
                        i64::MAX
                    ))
                })?,
            };
            values.push(value);
        }
        let at = |i: usize| values[i];
        Ok(match type_name {
            "latency" => ToxicKind::Latency {
                latency: at(0),
                jitter: at(1),
            },
            "timeout" => ToxicKind::Timeout { timeout: at(0) },
            "bandwidth" => ToxicKind::Bandwidth { rate: at(0) },
            "slow_close" => ToxicKind::SlowClose { delay: at(0) },
            "slicer" => ToxicKind::Slicer {
                average_size: at(0),
                size_variation: at(1),
                delay: at(2),
            },
            "limit_data" => ToxicKind::LimitData { bytes: at(0) },
            "noop" => ToxicKind::Noop,
            _ => return Err(ApiError::bad_request("invalid toxic type")),
        })
    }
}

/// Every created or updated toxic gets a fresh id so that open connections notice the change
/// (new toxicity roll, fresh per-connection counters).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// One toxic as stored on a proxy.
#[derive(Debug, Clone)]
pub struct Toxic {
    pub id: u64,
    pub name: String,
    pub stream: Stream,
    /// Kept as the f64 the request gave so that 0.2 reads back as 0.2 (Toxiproxy's float32
    /// prints that way too).
    pub toxicity: f64,
    pub kind: ToxicKind,
}

/// A rejected API request: HTTP status and Toxiproxy's error message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: u16,
    pub message: String,
}

impl ApiError {
    pub fn new(status: u16, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(400, message)
    }

    /// Toxiproxy's error body: `{"error": "...", "status": N}`.
    pub fn to_json(&self) -> Value {
        json!({ "error": self.message, "status": self.status })
    }
}

/// Toxicity is any number a Go float32 holds, as in Toxiproxy: 1 or more always applies, 0 or
/// less never, between is the chance per connection. A number past float32's range or not a
/// number is a 400, as Go's decoder refuses it.
fn toxicity_of(body: &Map<String, Value>, default: f64) -> Result<f64, ApiError> {
    match body.get("toxicity") {
        None | Some(Value::Null) => Ok(default),
        Some(v) => v
            .as_f64()
            .filter(|t| t.abs() <= f64::from(f32::MAX))
            .ok_or_else(|| {
                ApiError::bad_request(format!(
                    "bad request body: toxicity must be a number within float32's range, got {v}"
                ))
            }),
    }
}

fn attributes_of(body: &Map<String, Value>) -> Result<Map<String, Value>, ApiError> {
    match body.get("attributes") {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(v) => Err(ApiError::bad_request(format!(
            "bad request body: attributes must be an object, got {v}"
        ))),
    }
}

/// A string field of a toxic body: absent, null or "" is `None`; any other type is an error
/// (Go's decoder refuses it too).
fn string_of<'a>(body: &'a Map<String, Value>, field: &str) -> Result<Option<&'a str>, ApiError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(ApiError::bad_request(format!(
            "bad request body: {field} must be a string, got {v}"
        ))),
    }
}

fn object_of(body: &Value) -> Result<&Map<String, Value>, ApiError> {
    body.as_object().ok_or_else(|| {
        ApiError::bad_request(format!(
            "bad request body: expected a JSON object, got {body}"
        ))
    })
}

impl Toxic {
    /// Parses a `POST /proxies/{proxy}/toxics` body. Defaults follow Toxiproxy: stream
    /// `downstream`, toxicity 1, name `<type>_<stream>`. Checked in Toxiproxy's order: the
    /// body's shape, the stream, the type, then whether `taken` already names a toxic (409),
    /// and only then the attribute values, so a duplicate with bad attributes is a 409.
    pub fn from_create_json(body: &Value, taken: &dyn Fn(&str) -> bool) -> Result<Toxic, ApiError> {
        let body = object_of(body)?;
        let type_name = string_of(body, "type")?.unwrap_or_default();
        let named = string_of(body, "name")?;
        let toxicity = toxicity_of(body, 1.0)?;
        let attributes = attributes_of(body)?;
        let stream = match string_of(body, "stream")? {
            None => Stream::Downstream,
            Some(s) => Stream::parse(s).ok_or_else(|| {
                ApiError::bad_request("stream was invalid, can be either upstream or downstream")
            })?,
        };
        let name = match named {
            None => format!("{type_name}_{}", stream.as_str()),
            Some(n) => n.to_string(),
        };
        if !KINDS.iter().any(|(t, _)| *t == type_name) {
            return Err(ApiError::bad_request("invalid toxic type"));
        }
        if taken(&name) {
            return Err(ApiError::new(409, "toxic already exists"));
        }
        let kind = ToxicKind::build(type_name, &[], &attributes)?;
        Ok(Toxic {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            name,
            stream,
            toxicity,
            kind,
        })
    }

    /// Applies a `POST /proxies/{proxy}/toxics/{toxic}` body: toxicity and the given
    /// attributes change, everything else stays.
    pub fn updated(&self, body: &Value) -> Result<Toxic, ApiError> {
        let body = object_of(body)?;
        let kind = ToxicKind::build(
            self.kind.type_name(),
            &self.kind.attribute_values(),
            &attributes_of(body)?,
        )?;
        Ok(Toxic {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            name: self.name.clone(),
            stream: self.stream,
            toxicity: toxicity_of(body, self.toxicity)?,
            kind,
        })
    }

    pub fn to_json(&self) -> Value {
        let type_name = self.kind.type_name();
        let (_, names) = KINDS
            .iter()
            .find(|(t, _)| *t == type_name)
            .expect("every kind is listed in KINDS");
        let attributes: Map<String, Value> = names
            .iter()
            .zip(self.kind.attribute_values())
            .map(|((n, _), v)| (n.to_string(), json!(v)))
            .collect();
        json!({
            "name": self.name,
            "type": type_name,
            "stream": self.stream.as_str(),
            "toxicity": self.toxicity,
            "attributes": attributes,
        })
    }
}
