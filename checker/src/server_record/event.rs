//! One event of the server's record, exactly as it is written to and read from
//! `server.jsonl`.
//!
//! This file is the single definition of the server-record format. Every field is documented
//! in `docs/server-record.md`; change both together and bump [`SERVER_RECORD_VERSION`] when a
//! reader of the old format would misread the new one. The rules a reader enforces across
//! lines (index without gaps, time never decreasing, the torn last line) and within one (a
//! `set` names its value, a `reset` is of key `*`) are in `read.rs`.

use serde::{Deserialize, Serialize};

/// Version of the server-record format written by this build. Readers refuse newer versions.
pub const SERVER_RECORD_VERSION: u32 = 1;

/// The file's name in a run folder, beside `history.jsonl`.
pub const SERVER_RECORD_FILE: &str = "server.jsonl";

/// The key of a `reset`: the node lost every record, not one.
pub const RESET_KEY: &str = "*";

/// One line of `server.jsonl`: what a watcher saw happen to one record on one node. Unknown
/// fields are refused: unlike the history, this format has one writer (lockpick's watchers),
/// and a misspelt field would silently drop what it says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerEvent {
    /// Format version, [`SERVER_RECORD_VERSION`] when written by this build.
    pub v: u32,
    /// Position in the record, from 0, without gaps.
    pub index: u64,
    /// When lockpick's watcher observed it: nanoseconds since the run started, on the
    /// history's clock (`time_ns` of `history.jsonl`). Never decreases along the file.
    pub time_ns: u64,
    /// The node whose record this is (`n1`, `n2`, …, as the history's nemesis names them).
    pub node: String,
    /// The record's name on the server: a Redis key, an etcd key, a znode path, an SQL lock
    /// row's name; [`RESET_KEY`] for a `reset`.
    pub key: String,
    /// What happened to it.
    pub event: RecordChange,
    /// The owner as the server stores it (the Redis value, the etcd lease id, the znode's
    /// session id or data, the SQL row's owner column): required on `set`, optional on the
    /// others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The time to live the record had left at `time_ns`, in milliseconds, if it has one:
    /// `time_ns + ttl_ms` is when the server will expire it (a watcher that reads it after the
    /// change takes `time_ns` when the reading came).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
}

/// What happened to a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecordChange {
    /// The record now exists with `value` (created, or written over).
    Set,
    /// Its time to live was extended (`ttl_ms`: the new one).
    Renewed,
    /// The server removed it because its time to live ran out or its session expired.
    Expired,
    /// A client's command removed it.
    Deleted,
    /// The node lost every record (it restarted without persistence); `key` is `*`.
    Reset,
}

impl RecordChange {
    /// Every change, in the order the documentation lists them.
    pub const ALL: [RecordChange; 5] = [
        RecordChange::Set,
        RecordChange::Renewed,
        RecordChange::Expired,
        RecordChange::Deleted,
        RecordChange::Reset,
    ];

    /// The name as written in the file.
    pub fn name(self) -> &'static str {
        match self {
            RecordChange::Set => "set",
            RecordChange::Renewed => "renewed",
            RecordChange::Expired => "expired",
            RecordChange::Deleted => "deleted",
            RecordChange::Reset => "reset",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_round_trips_as_one_line_with_its_optional_fields_left_out() {
        let e = ServerEvent {
            v: SERVER_RECORD_VERSION,
            index: 0,
            time_ns: 5,
            node: "n1".into(),
            key: "lockpick:l".into(),
            event: RecordChange::Set,
            value: Some("0-9f".into()),
            ttl_ms: Some(300),
        };
        let line = serde_json::to_string(&e).unwrap();
        assert_eq!(
            line,
            r#"{"v":1,"index":0,"time_ns":5,"node":"n1","key":"lockpick:l","event":"set","value":"0-9f","ttl_ms":300}"#
        );
        assert_eq!(serde_json::from_str::<ServerEvent>(&line).unwrap(), e);
        let expired = ServerEvent {
            event: RecordChange::Expired,
            value: None,
            ttl_ms: None,
            ..e
        };
        let line = serde_json::to_string(&expired).unwrap();
        assert!(line.ends_with(r#""event":"expired"}"#), "{line}");
        for c in RecordChange::ALL {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.name()));
        }
    }
}
