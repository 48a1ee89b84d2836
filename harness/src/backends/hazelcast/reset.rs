//! Resetting Hazelcast CP members between runs that share them: the lock's CP group is
//! force-destroyed (Hazelcast's operator call, over a member's REST port), and the next run's
//! first client makes it again from scratch, as on fresh members: no lock, no CP session of an
//! earlier run's clients (a killed adapter's included), and fences that start over, since a
//! fence is the new group's own Raft log index.

use super::process::{rest_credentials, LOCK_GROUP};
use crate::processes::http;
use crate::server::{BoxFuture, Endpoints, Reset};
use std::net::SocketAddr;
use std::time::Duration;

pub(super) struct HzReset;

impl Reset for HzReset {
    fn reset<'a>(
        &'a self,
        endpoints: &'a Endpoints,
        limit: Duration,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            if endpoints.admin.is_empty() {
                return Err("no member's REST address to reset the CP group through".to_owned());
            }
            let mut why = Vec::new();
            for (name, rest) in &endpoints.admin {
                match destroy_group(*rest, limit).await {
                    Ok(()) => return Ok(()),
                    Err(e) => why.push(format!("{name}: {e}")),
                }
            }
            Err(why.join("; "))
        })
    }

    /// A killed member leaves the CP group, and one that came back must be promoted into it
    /// again (Hazelcast's CP membership calls), which lockpick does not do: fresh members.
    fn settle(&self) -> Option<&'static dyn crate::server::Settle> {
        None
    }
}

/// Destroys the lock's CP group through the member at `rest` and checks it is gone from the
/// groups the member lists. A group no client made yet counts as destroyed.
async fn destroy_group(rest: SocketAddr, limit: Duration) -> Result<(), String> {
    let credentials = rest_credentials();
    let destroy = format!("/hazelcast/rest/cp-subsystem/groups/{LOCK_GROUP}/remove");
    // Its answer is not the judge: a group never made is refused, and a destroy whose answer
    // was lost may have happened. The list says.
    let _ = http::request(rest, &destroy, Some(&credentials), limit).await;
    let listed = http::request(rest, "/hazelcast/rest/cp-subsystem/groups", None, limit)
        .await
        .ok_or_else(|| format!("{rest} did not list its CP groups"))?;
    if names_group(&listed, LOCK_GROUP)? {
        return Err(format!("CP group {LOCK_GROUP} still listed: {listed}"));
    }
    Ok(())
}

/// Whether the groups a member lists (JSON: the active groups' ids, each with its `name`, or
/// bare names) include `group`.
fn names_group(listed: &str, group: &str) -> Result<bool, String> {
    let value: serde_json::Value =
        serde_json::from_str(listed).map_err(|e| format!("CP groups listed as {listed}: {e}"))?;
    fn has(v: &serde_json::Value, group: &str) -> bool {
        match v {
            serde_json::Value::Object(o) => {
                o.get("name").and_then(|n| n.as_str()) == Some(group)
                    || o.values().any(|v| has(v, group))
            }
            serde_json::Value::Array(a) => a.iter().any(|v| has(v, group)),
            serde_json::Value::String(s) => s == group,
            _ => false,
        }
    }
    Ok(has(&value, group))
}

#[cfg(test)]
mod tests {
    use super::names_group;

    #[test]
    fn a_group_is_listed_by_its_name() {
        let listed = r#"[{"name":"METADATA","id":0},{"name":"default","id":6080}]"#;
        assert_eq!(names_group(listed, "default"), Ok(true));
        assert_eq!(
            names_group(r#"[{"name":"METADATA","id":0}]"#, "default"),
            Ok(false)
        );
        assert_eq!(
            names_group(r#"["METADATA","default"]"#, "default"),
            Ok(true)
        );
        assert!(names_group("<html>", "default").is_err());
    }
}
