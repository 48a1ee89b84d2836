//! Waiting for an etcd cluster's members to agree again after a run that stopped, cut off or
//! restarted some of them: every member names the same leader in the same term and has
//! applied the same log index. A leader that was stopped and continued may still believe it
//! leads and propose what it decided while stopped (lease revokes: etcd #15247); once it
//! names the new leader in the new term, it has stepped down.

use crate::processes::http;
use crate::server::{until_agreed, BoxFuture, Endpoints, Settle, SETTLE_POLL};
use std::net::SocketAddr;
use std::time::Duration;

pub(super) struct EtcdSettle;

impl Settle for EtcdSettle {
    fn settle<'a>(
        &'a self,
        endpoints: &'a Endpoints,
        limit: Duration,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(until_agreed(limit, move || async move {
            let mut seen = Vec::new();
            for (node, addr) in &endpoints.nodes {
                seen.push((node.as_str(), etcd_status(*addr, SETTLE_POLL * 4).await));
            }
            agreement(&seen)
        }))
    }
}

/// What one member says of the cluster (`/v3/maintenance/status`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Status {
    pub leader: u64,
    pub term: u64,
    pub applied: u64,
    /// The member's alarms and errors (`errors`), empty when there are none.
    pub errors: Vec<String>,
}

/// What the member at client address `addr` says of the cluster (`/v3/maintenance/status`),
/// `None` if it does not answer in time or answers something else.
pub(crate) async fn etcd_status(addr: SocketAddr, timeout: Duration) -> Option<Status> {
    let body = http::request(addr, "/v3/maintenance/status", Some("{}"), timeout).await?;
    parse_status(&body)
}

/// The leader, term, applied index and errors of a status answer. The JSON gateway writes
/// 64-bit numbers as strings, and these fields in camel case (3.4 and 3.6 alike).
fn parse_status(body: &str) -> Option<Status> {
    let status: serde_json::Value = serde_json::from_str(body).ok()?;
    let number = |field: &str| -> Option<u64> {
        match status.get(field) {
            // A field at its zero value is left out.
            None => Some(0),
            Some(v) => v.as_str()?.parse().ok(),
        }
    };
    let errors = match status.get("errors") {
        None => Vec::new(),
        Some(v) => (v.as_array()?.iter())
            .map(|e| e.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()?,
    };
    Some(Status {
        leader: number("leader")?,
        term: number("raftTerm")?,
        applied: number("raftAppliedIndex")?,
        errors,
    })
}

/// `Ok` when every member answered, without errors, naming one leader (not 0) in one term
/// and having applied one index; else what was apart, member by member.
fn agreement(seen: &[(&str, Option<Status>)]) -> Result<(), String> {
    let describe = || {
        (seen.iter())
            .map(|(node, s)| match s {
                Some(s) => format!(
                    "{node}: leader {:x} term {} applied {}{}",
                    s.leader,
                    s.term,
                    s.applied,
                    if s.errors.is_empty() {
                        String::new()
                    } else {
                        format!(" errors {:?}", s.errors)
                    }
                ),
                None => format!("{node}: no answer"),
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    let Some(statuses) = seen
        .iter()
        .map(|(_, s)| s.as_ref())
        .collect::<Option<Vec<_>>>()
    else {
        return Err(describe());
    };
    let Some(first) = statuses.first() else {
        return Ok(());
    };
    let agree = statuses.iter().all(|s| {
        s.errors.is_empty()
            && s.leader != 0
            && (s.leader, s.term, s.applied) == (first.leader, first.term, first.applied)
    });
    if agree {
        Ok(())
    } else {
        Err(describe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(leader: u64, term: u64, applied: u64) -> Option<Status> {
        Some(Status {
            leader,
            term,
            applied,
            errors: Vec::new(),
        })
    }

    #[test]
    fn a_status_answer_gives_leader_term_applied_index_and_errors() {
        // As etcd 3.4.23 and 3.6.16 answer (3.6 adds fields, with spaces after commas).
        let v34 = r#"{"header":{"cluster_id":"14841639068965178418","member_id":"10276657743932975437","revision":"1","raft_term":"2"},"version":"3.4.23","dbSize":"20480","leader":"10276657743932975437","raftIndex":"4","raftTerm":"2","raftAppliedIndex":"4","dbSizeInUse":"16384"}"#;
        let v36 = r#"{"header":{"cluster_id":"1", "member_id":"2", "revision":"1", "raft_term":"2"}, "version":"3.6.16", "dbSize":"20480", "leader":"10276657743932975437", "raftIndex":"4", "raftTerm":"2", "raftAppliedIndex":"4", "dbSizeInUse":"16384", "storageVersion":"3.6.0", "dbSizeQuota":"2147483648", "downgradeInfo":{}}"#;
        let want = Status {
            leader: 10276657743932975437,
            term: 2,
            applied: 4,
            errors: Vec::new(),
        };
        assert_eq!(parse_status(v34), Some(want.clone()));
        assert_eq!(parse_status(v36), Some(want));
        let alarmed = r#"{"leader":"5","raftTerm":"3","raftAppliedIndex":"9","errors":["memberID:5 alarm:NOSPACE "]}"#;
        assert_eq!(parse_status(alarmed).unwrap().errors.len(), 1);
        // No leader: the field is left out.
        let leaderless = parse_status(r#"{"raftTerm":"3","raftAppliedIndex":"9"}"#);
        assert_eq!(leaderless.unwrap().leader, 0);
        assert_eq!(parse_status("no json"), None);
        assert_eq!(
            parse_status(r#"{"leader":7}"#),
            None,
            "a number where etcd writes a string"
        );
    }

    #[test]
    fn members_agree_only_on_one_leader_one_term_and_one_applied_index() {
        let settled = [
            ("n1", status(7, 3, 120)),
            ("n2", status(7, 3, 120)),
            ("n3", status(7, 3, 120)),
        ];
        assert_eq!(agreement(&settled), Ok(()));
        for (i, apart) in [
            // A continued old leader that still thinks it leads, in its old term.
            [("n1", status(7, 3, 120)), ("n2", status(9, 2, 118))],
            // Caught up on the leader, not yet on the log.
            [("n1", status(7, 3, 120)), ("n2", status(7, 3, 117))],
            // No leader yet.
            [("n1", status(0, 4, 120)), ("n2", status(0, 4, 120))],
            // A member that does not answer.
            [("n1", status(7, 3, 120)), ("n2", None)],
        ]
        .iter()
        .enumerate()
        {
            let why = agreement(apart).expect_err(&format!("case {i}"));
            assert!(why.contains("n2"), "{why}");
        }
        let mut alarmed = status(7, 3, 120);
        alarmed.as_mut().unwrap().errors = vec!["NOSPACE".into()];
        assert!(agreement(&[("n1", status(7, 3, 120)), ("n2", alarmed)])
            .unwrap_err()
            .contains("NOSPACE"));
    }
}
