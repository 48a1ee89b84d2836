//! Resetting a ZooKeeper ensemble between runs that share it: every znode but `/zookeeper`
//! deleted, ephemeral ones of sessions an earlier run's clients left behind included, so a
//! lock folder is made again and its sequence numbers start again at 0 as on a fresh
//! ensemble. The zxid cannot go back; the lock takes no token from it across runs that a
//! check compares (each run's history is checked alone, the resource is cleared before it).

use crate::server::{BoxFuture, Endpoints, Reset};
use std::time::Duration;
use zookeeper_client::{Client, Error as ZkError};

pub(super) struct ZkReset;

impl Reset for ZkReset {
    fn reset<'a>(
        &'a self,
        endpoints: &'a Endpoints,
        limit: Duration,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let cluster: Vec<String> = endpoints.addrs().iter().map(|a| a.to_string()).collect();
            let work = async {
                let client = Client::connector()
                    .with_session_timeout(limit * 4)
                    .connect(&cluster.join(","))
                    .await
                    .map_err(|e| format!("connect: {e}"))?;
                let result = delete_below(&client, "/").await;
                drop(client);
                result
            };
            tokio::time::timeout(limit * 4, work)
                .await
                .map_err(|_| "timeout".to_owned())?
        })
    }

    fn settle(&self) -> Option<&'static dyn crate::server::Settle> {
        Some(&super::settle::ZkSettle)
    }
}

/// Deletes every znode below `path` (children first), leaving ZooKeeper's own `/zookeeper`.
async fn delete_below(client: &Client, path: &str) -> Result<(), String> {
    let mut stack = vec![(path.to_owned(), false)];
    while let Some((node, expanded)) = stack.pop() {
        if !expanded {
            let children = match client.list_children(&node).await {
                Ok(c) => c,
                // Gone meanwhile: an ephemeral node whose session just expired.
                Err(ZkError::NoNode) => continue,
                Err(e) => return Err(format!("list {node}: {e}")),
            };
            stack.push((node.clone(), true));
            for child in children {
                let full = match node.as_str() {
                    "/" => format!("/{child}"),
                    _ => format!("{node}/{child}"),
                };
                if full != "/zookeeper" {
                    stack.push((full, false));
                }
            }
        } else if node != "/" {
            match client.delete(&node, None).await {
                Ok(()) | Err(ZkError::NoNode) => {}
                Err(e) => return Err(format!("delete {node}: {e}")),
            }
        }
    }
    Ok(())
}
