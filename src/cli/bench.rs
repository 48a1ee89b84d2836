//! `lockpick bench`'s arguments.

use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The matrix file whose rows (locks) are measured (default:
    /// scenarios/matrix/default.toml; scenarios/matrix/libraries.toml for the libraries).
    #[arg(value_name = "FILE", default_value = "scenarios/matrix/default.toml")]
    pub file: PathBuf,
    /// Only these rows, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub rows: Vec<String>,
    /// Contending clients, comma-separated: one run per lock and count.
    #[arg(long, value_delimiter = ',', default_value = "1,4,16,64")]
    pub clients: Vec<usize>,
    /// Workload length of each run, in seconds.
    #[arg(long, default_value_t = 3.0)]
    pub duration: f64,
    /// Seed of every run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Also write the tables as markdown here, with the charts beside it
    /// (e.g. docs/lock-performance.md).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Root folder of stored runs; the benchmark goes to STORE/bench/<time>/.
    #[arg(long, default_value = "store")]
    pub store: PathBuf,
}
