//! Waiting for a ZooKeeper ensemble to agree again after a run that stopped, cut off or
//! restarted some of its members: every member serving (`srvr` names its mode), one leader
//! and the rest following it, all at the same zxid, so no member is still voting or syncing
//! when the next run's clients connect.

use super::process::{four_letter_word, parse_srvr, MemberState};
use crate::server::{until_agreed, BoxFuture, Endpoints, Settle, SETTLE_POLL};
use std::time::Duration;

pub(super) struct ZkSettle;

impl Settle for ZkSettle {
    fn settle<'a>(
        &'a self,
        endpoints: &'a Endpoints,
        limit: Duration,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(until_agreed(limit, move || async move {
            let mut seen = Vec::new();
            for (node, addr) in &endpoints.nodes {
                let answer =
                    tokio::time::timeout(SETTLE_POLL * 4, four_letter_word(*addr, b"srvr")).await;
                let state = match answer {
                    Ok(Ok(text)) => Some(parse_srvr(&text)),
                    _ => None,
                };
                seen.push((node.as_str(), state));
            }
            agreement(&seen)
        }))
    }
}

/// `Ok` when every member answered with its mode and zxid, exactly one leads (or the one
/// member is standalone), the rest follow, and all are at one zxid; else what was apart.
fn agreement(seen: &[(&str, Option<MemberState>)]) -> Result<(), String> {
    let describe = || {
        (seen.iter())
            .map(|(node, s)| match s {
                Some(MemberState {
                    mode: Some(mode),
                    zxid: Some(zxid),
                }) => format!("{node}: {mode} at zxid {zxid:#x}"),
                Some(_) => format!("{node}: not serving"),
                None => format!("{node}: no answer"),
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    let mut states = Vec::new();
    for (_, s) in seen {
        match s {
            Some(MemberState {
                mode: Some(mode),
                zxid: Some(zxid),
            }) => states.push((mode.as_str(), *zxid)),
            _ => return Err(describe()),
        }
    }
    let leaders = states.iter().filter(|(m, _)| *m == "leader").count();
    let followers = states.iter().filter(|(m, _)| *m == "follower").count();
    let standalone = states.len() == 1 && states[0].0 == "standalone";
    let one_zxid = states.windows(2).all(|w| w[0].1 == w[1].1);
    if one_zxid && (standalone || (leaders == 1 && leaders + followers == states.len())) {
        Ok(())
    } else {
        Err(describe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn srvr(mode: &str, zxid: &str) -> Option<MemberState> {
        Some(parse_srvr(&format!(
            "Zookeeper version: 3.8.0-5a02a05eddb59aee6ac762f7ea82e92a68eb9c0f, built on 2022-02-25 08:49 UTC\n\
             Latency min/avg/max: 0/0.3/4\nReceived: 41\nSent: 40\nConnections: 1\nOutstanding: 0\n\
             Zxid: {zxid}\nMode: {mode}\nNode count: 5\n"
        )))
    }

    #[test]
    fn srvr_gives_the_mode_and_the_zxid() {
        assert_eq!(
            srvr("follower", "0x30000000a"),
            Some(MemberState {
                mode: Some("follower".into()),
                zxid: Some(0x3_0000_000a),
            })
        );
        let not_serving = parse_srvr("This ZooKeeper instance is not currently serving requests\n");
        assert_eq!(not_serving.mode, None);
    }

    #[test]
    fn an_ensemble_agrees_only_with_one_leader_and_every_member_at_one_zxid() {
        let settled = [
            ("n1", srvr("follower", "0x300000004")),
            ("n2", srvr("leader", "0x300000004")),
            ("n3", srvr("follower", "0x300000004")),
        ];
        assert_eq!(agreement(&settled), Ok(()));
        let not_serving = Some(parse_srvr(
            "This ZooKeeper instance is not currently serving requests\n",
        ));
        for apart in [
            // Still syncing with the leader.
            [
                ("n1", srvr("leader", "0x300000004")),
                ("n2", srvr("follower", "0x200000009")),
            ],
            // Voting.
            [("n1", srvr("leader", "0x300000004")), ("n2", not_serving)],
            // Two that think they lead.
            [
                ("n1", srvr("leader", "0x300000004")),
                ("n2", srvr("leader", "0x300000004")),
            ],
            // No answer.
            [("n1", srvr("leader", "0x300000004")), ("n2", None)],
        ] {
            let why = agreement(&apart).expect_err("apart");
            assert!(why.contains("n2"), "{why}");
        }
        assert_eq!(
            agreement(&[("n1", srvr("standalone", "0x4"))]),
            Ok(()),
            "a single server agrees with itself"
        );
    }
}
