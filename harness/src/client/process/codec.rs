//! The client protocol's messages and their JSON-lines encoding (docs/client-protocol.md).
//! The protocol version is defined here and nowhere else.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;

/// The newest version of the client protocol this build speaks, sent in `init` as
/// `newest_protocol`; an adapter's hello names this one or an older one down to
/// [`OLDEST_PROTOCOL_VERSION`].
pub const PROTOCOL_VERSION: u64 = 2;
/// The oldest version still accepted, sent in `init` as `protocol`: version 1 adapters (no
/// event lines), even one that insists on the init's `protocol` being its own, keep working.
pub const OLDEST_PROTOCOL_VERSION: u64 = 1;
/// The version that brought event lines (`{"type":"event",…}`) and the hello's `events`.
pub const EVENTS_SINCE: u64 = 2;

/// The events an adapter may send unasked (protocol 2), as it declares them in its hello.
pub const EVENTS: [&str; 3] = ["lost", "suspended", "reconnected"];

/// The first line lockpick sends: everything the adapter needs to build its lock.
#[derive(Debug, Clone, Serialize)]
pub struct Init {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub id: u64,
    /// The oldest version lockpick speaks ([`OLDEST_PROTOCOL_VERSION`]), which every adapter
    /// takes.
    pub protocol: u64,
    /// The newest ([`PROTOCOL_VERSION`]): an adapter may answer with any version up to it.
    pub newest_protocol: u64,
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
    /// On a server that runs Redis Sentinel (`redis-sentinel`): its sentinels and the master's
    /// name. Absent otherwise, so an adapter that ignores it reads the init it always did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sentinels: Option<InitSentinels>,
}

/// `init`'s `sentinels`: where a Sentinel-aware library asks for the master.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InitSentinels {
    /// The name the sentinels know the master by (`SENTINEL get-master-addr-by-name`).
    pub master: String,
    /// The sentinels as `host:port`, reached directly.
    pub addrs: Vec<String>,
    /// Each node address the sentinels may answer (`host:port`), with the proxy in front of
    /// that node: a NAT map, as a library's user behind a NAT gives it.
    pub nat: BTreeMap<String, String>,
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
    /// Protocol 2: the events it may send unasked (of [`EVENTS`]; empty: none). Absent in a
    /// protocol 1 hello.
    #[serde(default)]
    pub events: Option<Vec<String>>,
}

/// An event line: what the library told its user, unasked, as it happened (protocol 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// One of [`EVENTS`], declared in the hello.
    pub event: String,
    /// The fencing token of the lock it is about, if the adapter knows it.
    pub token: Option<u64>,
    /// The library's words.
    pub reason: Option<String>,
}

/// The adapter's answer to a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Ok {
        id: u64,
        token: Option<u64>,
        lease_ms: Option<u64>,
        note: Option<String>,
        /// On an acquire: the value by which the lock's server knows this holder, when the
        /// library says it.
        owner: Option<String>,
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
        #[serde(default)]
        owner: Option<String>,
    },
    Fail {
        id: u64,
        reason: String,
    },
    Info {
        id: u64,
        reason: String,
    },
    Event {
        event: String,
        #[serde(default)]
        token: Option<u64>,
        #[serde(default)]
        reason: Option<String>,
    },
}

/// What one line from an adapter says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    Hello(Hello),
    Reply(Reply),
    Event(Notice),
}

/// Parses one line an adapter wrote; the error says what is wrong with it.
pub fn parse_line(line: &str) -> Result<Parsed, String> {
    let line: Line = serde_json::from_str(line).map_err(|e| {
        format!("not a protocol line ({e}); expected one JSON object with \"type\" hello, ok, fail, info or (protocol 2) event")
    })?;
    Ok(match line {
        Line::Hello(h) => Parsed::Hello(h),
        Line::Ok {
            id,
            token,
            lease_ms,
            note,
            owner,
        } => Parsed::Reply(Reply::Ok {
            id,
            token,
            lease_ms,
            note,
            owner,
        }),
        Line::Fail { id, reason } => Parsed::Reply(Reply::Fail { id, reason }),
        Line::Info { id, reason } => Parsed::Reply(Reply::Info { id, reason }),
        Line::Event {
            event,
            token,
            reason,
        } => Parsed::Event(Notice {
            event,
            token,
            reason,
        }),
    })
}

/// What is wrong with a hello's protocol and events, if anything: a version this build does
/// not speak, `events` in a version 1 hello, none in a version 2 one, or an unknown event.
pub fn hello_problem(hello: &Hello) -> Option<String> {
    let allowed = EVENTS.join(", ");
    if !(OLDEST_PROTOCOL_VERSION..=PROTOCOL_VERSION).contains(&hello.protocol) {
        return Some(format!(
            "it speaks protocol {}, this lockpick speaks {OLDEST_PROTOCOL_VERSION} to {PROTOCOL_VERSION}",
            hello.protocol
        ));
    }
    match (&hello.events, hello.protocol >= EVENTS_SINCE) {
        (Some(_), false) => Some(format!(
            "its hello lists `events`, which needs protocol {EVENTS_SINCE} (it says protocol {}); send \"protocol\":{EVENTS_SINCE} or leave `events` out",
            hello.protocol
        )),
        (None, true) => Some(format!(
            "a protocol {} hello must list `events`: the events it may send ([] for none); allowed: {allowed}",
            hello.protocol
        )),
        (Some(events), true) => events
            .iter()
            .find(|e| !EVENTS.contains(&e.as_str()))
            .map(|e| format!("its hello's `events` names {e:?}; allowed: {allowed}")),
        (None, false) => None,
    }
}

/// What is wrong with an event line from an adapter whose hello was `hello`, if anything.
pub fn notice_problem(hello: &Hello, notice: &Notice) -> Option<String> {
    let declared = hello.events.as_deref().unwrap_or_default();
    if hello.protocol < EVENTS_SINCE {
        return Some(format!(
            "it sent an event line, which needs protocol {EVENTS_SINCE}; its hello said protocol {}",
            hello.protocol
        ));
    }
    if !declared.contains(&notice.event) {
        let list = if declared.is_empty() {
            "none".to_owned()
        } else {
            declared.join(", ")
        };
        return Some(format!(
            "field `event`: {:?} is not an event its hello declared; allowed: {list} (its hello's `events`, of {})",
            notice.event,
            EVENTS.join(", ")
        ));
    }
    None
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
                note: None,
                owner: None
            }))
        );
        assert_eq!(
            parse_line(r#"{"type":"ok","id":3,"token":null,"lease_ms":null,"owner":"u-1:42"}"#),
            Ok(Parsed::Reply(Reply::Ok {
                id: 3,
                token: None,
                lease_ms: None,
                note: None,
                owner: Some("u-1:42".to_owned())
            }))
        );
        assert_eq!(
            parse_line(r#"{"type":"ok","id":4}"#),
            Ok(Parsed::Reply(Reply::Ok {
                id: 4,
                token: None,
                lease_ms: None,
                note: None,
                owner: None
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

    fn hello(line: &str) -> Hello {
        match parse_line(line) {
            Ok(Parsed::Hello(h)) => h,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn version_1_and_2_hellos_are_accepted_and_events_need_version_2() {
        let v1 = hello(
            r#"{"type":"hello","id":0,"protocol":1,"adapter":"a","library":"l","version":"1","ops":["acquire","release"]}"#,
        );
        assert_eq!((v1.protocol, &v1.events), (1, &None));
        assert_eq!(hello_problem(&v1), None);
        let v2 = hello(
            r#"{"type":"hello","id":0,"protocol":2,"adapter":"a","library":"l","version":"1","ops":["acquire","release"],"events":["lost","suspended"]}"#,
        );
        assert_eq!(hello_problem(&v2), None);
        let none = Hello {
            events: Some(vec![]),
            ..v2.clone()
        };
        assert_eq!(hello_problem(&none), None);
        let v1_events = Hello {
            protocol: 1,
            ..v2.clone()
        };
        assert!(hello_problem(&v1_events)
            .unwrap()
            .contains("lists `events`, which needs protocol 2 (it says protocol 1)"));
        let v2_silent = Hello {
            events: None,
            ..v2.clone()
        };
        assert!(hello_problem(&v2_silent)
            .unwrap()
            .contains("must list `events`"));
        let unknown = Hello {
            events: Some(vec!["expired".into()]),
            ..v2.clone()
        };
        assert_eq!(
            hello_problem(&unknown).unwrap(),
            r#"its hello's `events` names "expired"; allowed: lost, suspended, reconnected"#
        );
        let v3 = Hello { protocol: 3, ..v2 };
        assert_eq!(
            hello_problem(&v3).unwrap(),
            "it speaks protocol 3, this lockpick speaks 1 to 2"
        );
    }

    #[test]
    fn event_lines_parse_and_are_checked_against_the_hello() {
        let lost = parse_line(r#"{"type":"event","event":"lost","token":17,"reason":"key gone"}"#);
        let notice = Notice {
            event: "lost".into(),
            token: Some(17),
            reason: Some("key gone".into()),
        };
        assert_eq!(lost, Ok(Parsed::Event(notice.clone())));
        assert_eq!(
            parse_line(r#"{"type":"event","event":"suspended"}"#),
            Ok(Parsed::Event(Notice {
                event: "suspended".into(),
                token: None,
                reason: None
            }))
        );
        // Malformed: no event, an unknown field, a token of the wrong type, an id.
        assert!(parse_line(r#"{"type":"event"}"#).is_err());
        assert!(parse_line(r#"{"type":"event","event":"lost","when":3}"#)
            .unwrap_err()
            .contains("unknown field `when`"));
        assert!(parse_line(r#"{"type":"event","event":"lost","token":"x"}"#).is_err());
        assert!(parse_line(r#"{"type":"event","id":4,"event":"lost"}"#).is_err());
        let v2 = hello(
            r#"{"type":"hello","id":0,"protocol":2,"adapter":"a","library":"l","version":"1","ops":["acquire","release"],"events":["lost"]}"#,
        );
        assert_eq!(notice_problem(&v2, &notice), None);
        let suspended = Notice {
            event: "suspended".into(),
            ..notice.clone()
        };
        assert_eq!(
            notice_problem(&v2, &suspended).unwrap(),
            r#"field `event`: "suspended" is not an event its hello declared; allowed: lost (its hello's `events`, of lost, suspended, reconnected)"#
        );
        let v1 = Hello {
            protocol: 1,
            events: None,
            ..v2
        };
        assert_eq!(
            notice_problem(&v1, &notice).unwrap(),
            "it sent an event line, which needs protocol 2; its hello said protocol 1"
        );
    }

    #[test]
    fn requests_and_init_carry_type_and_id() {
        let line = request_line(Op::Renew, 9, "2-ab");
        assert_eq!(line, r#"{"type":"renew","id":9,"holder":"2-ab"}"#);
        let init = Init {
            kind: "init",
            id: 0,
            protocol: OLDEST_PROTOCOL_VERSION,
            newest_protocol: PROTOCOL_VERSION,
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
            sentinels: None,
        };
        let json: Json = serde_json::from_str(&init_line(&init)).unwrap();
        assert_eq!(json["type"], "init");
        assert_eq!(json["protocol"], 1, "what every version 1 adapter takes");
        assert_eq!(json["newest_protocol"], PROTOCOL_VERSION);
        assert_eq!(json["retry_delay_ms"], serde_json::json!([5, 20]));
        assert!(
            json.get("sentinels").is_none(),
            "absent without sentinels: {json}"
        );

        let on_sentinel = Init {
            sentinels: Some(InitSentinels {
                master: "lockpick".into(),
                addrs: vec!["127.0.0.1:2".into(), "127.0.0.1:3".into()],
                nat: BTreeMap::from([("127.0.0.1:4".into(), "127.0.0.1:5".into())]),
            }),
            ..init
        };
        let json: Json = serde_json::from_str(&init_line(&on_sentinel)).unwrap();
        assert_eq!(
            json["sentinels"],
            serde_json::json!({"master": "lockpick", "addrs": ["127.0.0.1:2", "127.0.0.1:3"],
                               "nat": {"127.0.0.1:4": "127.0.0.1:5"}})
        );
        assert_eq!(json["protocol"], 1, "an optional field, no new version");
    }
}
