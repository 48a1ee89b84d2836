//! What each lock costs: `lockpick bench` runs every lock of a matrix file with no fault, no
//! hold and no think time at several client counts, and this module keeps the figures
//! (`bench.json`), writes them as markdown and draws them.

mod chart;
mod markdown;

pub use chart::{handoff_svg, latency_svg};
pub use markdown::bench_markdown;

use crate::atomic_write::write_atomic;
use crate::error::ReportError;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Format version of `bench.json`.
pub const BENCH_VERSION: u32 = 1;
/// Folder under the store that benchmarks go to (`STORE/bench/<time>/`).
pub const BENCH_DIR: &str = "bench";

/// One benchmark: every lock at every client count, from one build.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchRecord {
    pub v: u32,
    /// When it started, UTC `YYYYMMDDTHHMMSSZ`.
    pub started: String,
    pub lockpick_version: String,
    /// The matrix file whose rows were measured.
    pub matrix: String,
    pub seed: u64,
    /// Workload length of each run.
    pub duration_ms: u64,
    /// The client counts, in order.
    pub clients: Vec<usize>,
    /// What the machine was (cores), since every figure depends on it.
    pub machine: String,
    pub points: Vec<BenchPoint>,
    /// The command that repeats it.
    pub command: String,
}

/// One lock at one client count.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchPoint {
    /// The matrix row.
    pub row: String,
    /// The lock (`redis`, `process@redis`, …) and, for a library, what its adapter said.
    pub lock: String,
    pub library: Option<String>,
    pub clients: usize,
    /// How long the workload ran.
    pub workload_ms: u64,
    /// Acquires that succeeded: each one a handoff of the lock (or a first grant).
    pub grants: u64,
    pub failed: u64,
    pub unknown: u64,
    /// Acquire latency (invocation to `ok`), milliseconds.
    pub acquire_p50_ms: Option<f64>,
    pub acquire_p99_ms: Option<f64>,
    /// CPU the lock's servers used during the workload (every node's process tree), if
    /// lockpick started them.
    pub server_cpu_ms: Option<u64>,
    /// The run's verdict: a benchmark of a lock that broke exclusion is no benchmark.
    pub verdict: String,
    /// The run's folder, relative to the store.
    pub run: String,
    /// Why there is no figure (the run failed), if so.
    pub error: Option<String>,
}

impl BenchPoint {
    /// Grants per second of workload.
    pub fn grants_per_sec(&self) -> f64 {
        self.grants as f64 / (self.workload_ms.max(1) as f64 / 1000.0)
    }

    /// Server CPU milliseconds per grant.
    pub fn cpu_ms_per_grant(&self) -> Option<f64> {
        let cpu = self.server_cpu_ms?;
        (self.grants > 0).then(|| cpu as f64 / self.grants as f64)
    }
}

/// Writes `bench.json`, `bench.md`, `handoff.svg` and `latency.svg` into `dir`.
pub fn write_bench(dir: &Path, record: &BenchRecord) -> Result<(), ReportError> {
    let write = |name: &str, bytes: &[u8]| write_atomic(&dir.join(name), bytes);
    write(
        "bench.json",
        &serde_json::to_vec_pretty(record).expect("bench record serializes"),
    )?;
    write("handoff.svg", handoff_svg(record)?.as_bytes())?;
    write("latency.svg", latency_svg(record)?.as_bytes())?;
    write("bench.md", bench_markdown(record, "").as_bytes())?;
    Ok(())
}
