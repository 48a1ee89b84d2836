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
/// for the slicer delay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToxicKind {
    Latency {
        latency: u64,
        jitter: u64,
    },
    /// `timeout == 0` drops data until the toxic is removed; otherwise the connection is
    /// also closed after `timeout` ms.
    Timeout {
        timeout: u64,
    },
    Bandwidth {
        rate: u64,
    },
    SlowClose {
        delay: u64,
    },
    Slicer {
        average_size: u64,
        size_variation: u64,
        delay: u64,
    },
    LimitData {
        bytes: u64,
    },
}

const KINDS: &[(&str, &[&str])] = &[
    ("latency", &["latency", "jitter"]),
    ("timeout", &["timeout"]),
    ("bandwidth", &["rate"]),
    ("slow_close", &["delay"]),
    ("slicer", &["average_size", "size_variation", "delay"]),
    ("limit_data", &["bytes"]),
];

impl ToxicKind {
    fn type_name(&self) -> &'static str {
        match self {
            ToxicKind::Latency { .. } => "latency",
            ToxicKind::Timeout { .. } => "timeout",
            ToxicKind::Bandwidth { .. } => "bandwidth",
            ToxicKind::SlowClose { .. } => "slow_close",
            ToxicKind::Slicer { .. } => "slicer",
            ToxicKind::LimitData { .. } => "limit_data",
        }
    }

    fn attribute_values(&self) -> Vec<u64> {
        match *self {
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
    /// base values (zero, as Go's decoder leaves them), unknown ones are ignored.
    fn build(
        type_name: &str,
        base: &[u64],
        attributes: &Map<String, Value>,
    ) -> Result<Self, String> {
        let (_, names) = KINDS
            .iter()
            .find(|(t, _)| *t == type_name)
            .ok_or_else(|| "invalid toxic type".to_string())?;
        let mut values = Vec::with_capacity(names.len());
        for (i, name) in names.iter().enumerate() {
            let value = match attributes.get(*name) {
                None => base.get(i).copied().unwrap_or(0),
                Some(v) => v.as_u64().ok_or_else(|| {
                    format!("bad request body: attribute {name} must be a non-negative integer")
                })?,
            };
            values.push(value);
        }
        Ok(match type_name {
            "latency" => ToxicKind::Latency {
                latency: values[0],
                jitter: values[1],
            },
            "timeout" => ToxicKind::Timeout { timeout: values[0] },
            "bandwidth" => ToxicKind::Bandwidth { rate: values[0] },
            "slow_close" => ToxicKind::SlowClose { delay: values[0] },
            "slicer" => ToxicKind::Slicer {
                average_size: values[0],
                size_variation: values[1],
                delay: values[2],
            },
            _ => ToxicKind::LimitData { bytes: values[0] },
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
    pub toxicity: f32,
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

fn toxicity_of(body: &Map<String, Value>, default: f32) -> Result<f32, ApiError> {
    match body.get("toxicity") {
        None => Ok(default),
        Some(v) => v
            .as_f64()
            .filter(|t| (0.0..=1.0).contains(t))
            .map(|t| t as f32)
            .ok_or_else(|| ApiError::bad_request("bad request body: toxicity must be in 0..=1")),
    }
}

fn attributes_of(body: &Map<String, Value>) -> Result<Map<String, Value>, ApiError> {
    match body.get("attributes") {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(_) => Err(ApiError::bad_request(
            "bad request body: attributes must be an object",
        )),
    }
}

impl Toxic {
    /// Parses a `POST /proxies/{proxy}/toxics` body. Defaults follow Toxiproxy: stream
    /// `downstream`, toxicity 1, name `<type>_<stream>`.
    pub fn from_create_json(body: &Value) -> Result<Toxic, ApiError> {
        let body = body
            .as_object()
            .ok_or_else(|| ApiError::bad_request("bad request body: expected an object"))?;
        let type_name = body
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| ApiError::bad_request("invalid toxic type"))?;
        let stream = match body.get("stream").and_then(Value::as_str) {
            None | Some("") => Stream::Downstream,
            Some(s) => Stream::parse(s).ok_or_else(|| {
                ApiError::bad_request("stream was invalid, can be either upstream or downstream")
            })?,
        };
        let name = match body.get("name").and_then(Value::as_str) {
            None | Some("") => format!("{type_name}_{}", stream.as_str()),
            Some(n) => n.to_string(),
        };
        let toxicity = toxicity_of(body, 1.0)?;
        let kind = ToxicKind::build(type_name, &[], &attributes_of(body)?)
            .map_err(ApiError::bad_request)?;
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
        let body = body
            .as_object()
            .ok_or_else(|| ApiError::bad_request("bad request body: expected an object"))?;
        let kind = ToxicKind::build(
            self.kind.type_name(),
            &self.kind.attribute_values(),
            &attributes_of(body)?,
        )
        .map_err(ApiError::bad_request)?;
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
            .map(|(n, v)| (n.to_string(), json!(v)))
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
