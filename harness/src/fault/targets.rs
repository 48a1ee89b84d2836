//! Which nodes a fault on nodes hits, as a scenario names them.

use serde::Serialize;

/// Which nodes a fault on nodes hits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Targets {
    All,
    /// One node chosen with the seed each time the fault starts.
    RandomOne,
    Nodes(Vec<String>),
    /// The member that leads the cluster when the fault starts (cluster backends only).
    Leader,
}

/// What a fault allows in its `nodes` field.
#[derive(Debug, Clone, Copy)]
pub struct TargetRule {
    /// It acts on cluster members: it may name the leader, and hits one random member unless
    /// told (instead of every node).
    pub members: bool,
    /// `"all"` is allowed (an isolation of every member would cut nobody off).
    pub all: bool,
}
