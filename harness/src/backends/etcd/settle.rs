//! Waiting for an etcd cluster's members to agree again after a run that stopped, cut off or
//! restarted some of them: every member names the same leader in the same term and has
//! applied the same log index. A leader that was stopped and continued may still believe it
//! leads and propose what it decided while stopped (lease revokes: etcd #15247); once it
//! names the new leader in the new term, it has stepped down.

use super::process::{etcd_status, Status};
use crate::server::{until_agreed, BoxFuture, Endpoints, Settle, SETTLE_POLL};
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
            member: 1,
            leader,
            term,
            applied,
            errors: Vec::new(),
        })
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
