//! What the clients do (`[workload]`) and how the protected resource treats their writes.

use super::ms::MsRange;
use serde::Serialize;

/// What clients do while they hold the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadKind {
    /// acquire → write(token) → release.
    FencedWrite,
    /// acquire → read → write(read + 1) → release; broken exclusion shows as lost increments.
    Counter,
}

/// The client workload.
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadSpec {
    pub kind: WorkloadKind,
    pub clients: usize,
    pub duration_ms: u64,
    /// Time spent holding the lock between the write and the release.
    pub hold_ms: MsRange,
    /// Time between a release and the next acquire.
    pub think_ms: MsRange,
}

/// How the protected resource treats writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResourceMode {
    /// Accepts every write.
    Naive,
    /// Rejects a write whose token is lower than the highest it accepted.
    Fenced,
}
