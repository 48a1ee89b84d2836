//! The shapes several server kinds share: a consensus cluster whose members talk through
//! the peer proxies, and single servers started one per node behind their proxies.

use super::{Endpoints, NodeRule, StartCtx, StartError, Started};
use crate::cluster::Cluster;
use crate::processes::NodeKind;
use std::sync::Arc;

/// The node rule of a consensus cluster: an odd size so that every split has a majority side.
pub const CLUSTER_NODES: NodeRule = NodeRule {
    default: 3,
    min: 1,
    max: 7,
    odd: true,
};

/// What clients of a started cluster reach: the member proxies, and the peer network.
pub fn started_cluster(nodes: &[String], cluster: Cluster) -> Started {
    Started {
        endpoints: Endpoints {
            nodes: nodes.iter().cloned().zip(cluster.client_addrs).collect(),
            sentinels: None,
            admin: Vec::new(),
        },
        cluster: Some(Arc::new(cluster.net)),
    }
}

/// One server: a lock that lives on one database.
pub const SINGLE_SERVER: NodeRule = NodeRule {
    default: 1,
    min: 1,
    max: 1,
    odd: false,
};

/// Starts every node of `ctx` as `kind`, each behind a proxy named after it.
pub async fn start_all(ctx: StartCtx<'_>, kind: NodeKind) -> Result<Started, StartError> {
    let mut endpoints = Endpoints::default();
    for node in &ctx.nodes {
        let info = ctx
            .supervisor
            .lock()
            .await
            .start(node, kind.clone())
            .await?;
        let addr = ctx.proxies.create(node, info.addr).await?;
        endpoints.nodes.push((node.clone(), addr));
    }
    Ok(Started {
        endpoints,
        cluster: None,
    })
}
