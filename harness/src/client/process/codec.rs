//! The client protocol's messages and their JSON-lines encoding (docs/client-protocol.md).
//! The protocol version is defined here and nowhere else.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

/// The version of the client protocol this build speaks; an adapter's hello must name it.
pub const PROTOCOL_VERSION: u64 = 1;

/// The first line lockpick sends: everything the adapter needs to build its lock.
#[derive(Debug, Clone, Serialize)]
pub struct Init {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub id: u64,
    pub protocol: u64,
    /// The lock nodes' addresses as `host:port`: the proxies in front of the servers.
    pub nodes: Vec<String>,
    pub lock: String,
    pub ttl_ms: u64,
    pub acquire_timeout_ms: u64,
    /// `[min, max]` pause between tries, in milliseconds.
    pub retry_delay_ms: [u64; 2],
    pub op_timeout_ms: u64,
    /// The logical client (0-based) and the process id its history lines carry.
    pub client: usize,
    pub process: u64,
    /// Seeds the adapter's own random choices, if it makes any.
    pub seed: u64,
    /// The scenario's extra init fields (`[client] init`), passed as they are.
    pub extra: Map<String, Json>,
}

/// A request after `init`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Acquire,
    Release,
    Renew,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Acquire => "acquire",
            Op::Release => "release",
            Op::Renew => "renew",
        }
    }
}

#[derive(Debug, Serialize)]
struct Request<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    id: u64,
    /// lockpick's name of this holder (the same for an acquire and the release and renewals
    /// of what it got); libraries that choose their own lock value may ignore it.
    holder: &'a str,
}

/// One request as a line (without the newline).
pub fn request_line(op: Op, id: u64, holder: &str) -> String {
    serde_json::to_string(&Request {
        kind: op.name(),
        id,
        holder,
    })
    .expect("a request serializes")
}

/// One init as a line (without the newline).
pub fn init_line(init: &Init) -> String {
    serde_json::to_string(init).expect("init serializes")
}

/// The adapter's answer to `init`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hello {
    pub id: u64,
    pub protocol: u64,
    /// The adapter's own name, e.g. `node-redlock`.
    pub adapter: String,
    /// The library under test and its version, as installed.
    pub library: String,
    pub version: String,
    /// The requests it answers: `acquire` and `release` always, `renew` if the library can
    /// extend a lease.
    pub ops: Vec<String>,
}

/// The adapter's answer to a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Ok {
        id: u64,
        token: Option<u64>,
        lease_ms: Option<u64>,
        note: Option<String>,
    },
    Fail {
        id: u64,
        reason: String,
    },
    Info {
        id: u64,
        reason: String,
    },
}

impl Reply {
    pub fn id(&self) -> u64 {
        match self {
            Reply::Ok { id, .. } | Reply::Fail { id, .. } | Reply::Info { id, .. } => *id,
        }
    }
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
enum Line {
    Hello(Hello),
    Ok {
        id: u64,
        #[serde(default)]
        token: Option<u64>,
        #[serde(default)]
        lease_ms: Option<u64>,
        #[serde(default)]
        note: Option<String>,
    },
    Fail {
        id: u64,
        reason: String,
    },
    Info {
        id: u64,
        reason: String,
    },
}

/// What one line from an adapter says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    Hello(Hello),
    Reply(Reply),
}

/// Parses one line an adapter wrote; the error says what is wrong with it.
pub fn parse_line(line: &str) -> Result<Parsed, String> {
    let line: Line = serde_json::from_str(line).map_err(|e| {
        format!("not a protocol line ({e}); expected one JSON object with \"type\" hello, ok, fail or info")
    })?;
    Ok(match line {
        Line::Hello(h) => Parsed::Hello(h),
        Line::Ok {
            id,
            token,
            lease_ms,
            note,
        } => Parsed::Reply(Reply::Ok {
            id,
            token,
            lease_ms,
            note,
        }),
        Line::Fail { id, reason } => Parsed::Reply(Reply::Fail { id, reason }),
        Line::Info { id, reason } => Parsed::Reply(Reply::Info { id, reason }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_parse_with_and_without_optional_fields() {
        assert_eq!(
            parse_line(r#"{"type":"ok","id":3,"token":7,"lease_ms":990}"#),
            Ok(Parsed::Reply(Reply::Ok {
                id: 3,
                token: Some(7),
                lease_ms: Some(990),
                note: None
            }))
        );
        assert_eq!(
            parse_line(r#"{"type":"ok","id":4}"#),
            Ok(Parsed::Reply(Reply::Ok {
                id: 4,
                token: None,
                lease_ms: None,
                note: None
            }))
        );
        assert_eq!(
            parse_line(r#"{"type":"fail","id":5,"reason":"not-owner"}"#),
            Ok(Parsed::Reply(Reply::Fail {
                id: 5,
                reason: "not-owner".into()
            }))
        );
    }

    #[test]
    fn garbage_unknown_types_and_unknown_fields_are_errors() {
        assert!(parse_line("hello world").is_err());
        assert!(parse_line(r#"{"type":"maybe","id":1}"#).is_err());
        assert!(parse_line(r#"{"type":"ok","id":1,"tokne":3}"#).is_err());
        assert!(parse_line(r#"{"type":"fail","id":1}"#).is_err());
    }

    #[test]
    fn requests_and_init_carry_type_and_id() {
        let line = request_line(Op::Renew, 9, "2-ab");
        assert_eq!(line, r#"{"type":"renew","id":9,"holder":"2-ab"}"#);
        let init = Init {
            kind: "init",
            id: 0,
            protocol: PROTOCOL_VERSION,
            nodes: vec!["127.0.0.1:1".into()],
            lock: "lock".into(),
            ttl_ms: 1000,
            acquire_timeout_ms: 2000,
            retry_delay_ms: [5, 20],
            op_timeout_ms: 250,
            client: 1,
            process: 5,
            seed: 42,
            extra: Map::new(),
        };
        let json: Json = serde_json::from_str(&init_line(&init)).unwrap();
        assert_eq!(json["type"], "init");
        assert_eq!(json["protocol"], PROTOCOL_VERSION);
        assert_eq!(json["retry_delay_ms"], serde_json::json!([5, 20]));
    }
}
