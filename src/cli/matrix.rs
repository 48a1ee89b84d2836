//! `lockpick matrix`'s arguments.

use clap::{Args, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct MatrixArgs {
    /// `diff OLD NEW`: two publications side by side, instead of running a matrix.
    #[command(subcommand)]
    pub action: Option<MatrixAction>,
    /// The matrix file (default: scenarios/matrix/default.toml). With --resume, the copy in the
    /// matrix folder unless a FILE is given: it then replaces the copy (new expectations or
    /// notes) and the runs already made are kept (use --redo after changing a fault's size).
    pub file: Option<PathBuf>,
    /// Runs per cell, 1 to 1000 (default: the file's `seeds`).
    #[arg(long)]
    pub seeds: Option<u64>,
    /// Only these rows (locks), comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub rows: Vec<String>,
    /// Only these columns (faults), comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub faults: Vec<String>,
    /// Continue the matrix in DIR (default: the newest under STORE/matrix/): runs already
    /// finished there are not run again.
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<PathBuf>,
    /// With --resume: run the selected cells' finished runs again too.
    #[arg(long, requires = "resume")]
    pub redo: bool,
    /// Run nothing: write matrix.json, matrix.html (and --markdown) from the runs already
    /// recorded in the --resume folder.
    #[arg(long, requires = "resume")]
    pub report_only: bool,
    /// With --report-only: first check every recorded run again from its history with this
    /// lockpick's checker (after a fix to it), rewriting each run's results.json and report;
    /// the page names the runs whose verdict changed, and what it was.
    #[arg(long, requires = "report_only")]
    pub recheck: bool,
    /// Also write the matrix as markdown here (e.g. docs/safety-matrix.md).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Also write the matrix as a JUnit XML file here: a testsuite per row, a testcase per
    /// cell (a cell that disagrees with its expectation fails; one that says nothing is
    /// skipped), each row's cells' figures as its properties.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Root folder of stored runs; the matrix goes to STORE/matrix/<time>/.
    #[arg(long, default_value = "store")]
    pub store: PathBuf,
    /// Use the Toxiproxy at HOST:PORT instead of the embedded one.
    #[arg(long, value_name = "HOST:PORT", value_parser = super::host_port)]
    pub toxiproxy: Option<SocketAddr>,
    /// Run on servers lockpick does not start (see `scenario --external`); cells whose fault
    /// needs lockpick's own servers are shown as n/a.
    #[arg(long, value_name = "HOST:PORT,…", value_delimiter = ',')]
    pub external: Vec<SocketAddr>,
    /// Run only shard K of N of the matrix's runs (1 <= K <= N), e.g. one CI job of N: every
    /// (cell, seed) run belongs to one shard, the same on every machine, and shards are about
    /// equally long. `lockpick merge` joins the shards' stores into one matrix.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<lockpick_harness::matrix::Shard>,
    /// Use the redis-server at HOST:PORT as the protected resource.
    #[arg(long, value_name = "HOST:PORT")]
    pub resource: Option<SocketAddr>,
    /// Start and stop the servers for every run. By default a row's servers stay up across
    /// its consecutive runs and are reset in between (keys, rows, znodes, sessions and
    /// proxies cleared), unless a run's fault changed them in a way a reset cannot undo (a
    /// node crash, a failover, …); this turns that off, to compare verdicts.
    #[arg(long)]
    pub fresh_servers: bool,
    /// Runs at once, 1 to 16, each on servers of its own (a row's servers are then started
    /// once per job that runs it). Most of a run is waiting on its workload and faults, so
    /// a few at once fill the cores; many at once on few cores make pauses and timeouts
    /// less exact. Every run's plan and seed are the same whatever the number; the page
    /// records it in the command it was made with.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=16))]
    pub jobs: u16,
    /// After the runs, search every cell that came out safe (or whose fault fell short of
    /// testing anything) with `lockpick explore` for this
    /// long (`5m`, `90s`, `1h`): the column's faults at sizes from 0.1x to 3x of the row's
    /// lease and at drawn times, nodes and clients, on the row's own workload; a find is
    /// shrunk for as long again. A cell stays safe only if the search did not break it either
    /// (`UNSAFE (explore)`), and the page says how much was searched. Cells already explored
    /// in the folder are skipped unless --redo. Not with --shard (explore the merged matrix:
    /// `--resume DIR --explore-safe 5m`) or --report-only.
    #[arg(long, value_name = "BUDGET", value_parser = super::explore::budget)]
    pub explore_safe: Option<std::time::Duration>,
    /// Seeds until the answer is sure: after the matrix's seeds, keep adding seeds to each
    /// cell until it has a violation or the 95% upper bound of its violation rate
    /// (Clopper-Pearson, over the runs that could show one) is at most this (`20%`): 17 runs
    /// without a violation for 20%, 36 for 10%. Up to --max-seeds per cell; resumable, and
    /// with --shard each shard takes whole cells.
    #[arg(long, value_name = "PERCENT", value_parser = percent)]
    pub until: Option<f64>,
    /// With --until: the most seeds a cell gets (default 100).
    #[arg(long, value_name = "N", requires = "until")]
    pub max_seeds: Option<u64>,
}

/// A percentage (`20%` or `20`) as a fraction, above 0 and below 100.
fn percent(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_end_matches('%');
    let p: f64 = number.parse().map_err(|_| {
        format!("{text:?} is not a percentage; allowed: a number above 0 and below 100, like 20%")
    })?;
    if !(p > 0.0 && p < 100.0) {
        return Err(format!(
            "{text} is out of range; allowed: above 0% and below 100%"
        ));
    }
    Ok(p / 100.0)
}

/// What `matrix` does instead of running one.
#[derive(Debug, Subcommand)]
pub enum MatrixAction {
    /// Two publications of a matrix side by side: each cell's violations over the runs that
    /// could show one, before and after, with Fisher's exact test, and the cells that moved
    /// beyond noise (Holm-corrected over every cell compared, at 5%).
    Diff(MatrixDiffArgs),
    /// Make a published page again from the record committed beside it
    /// (`docs/<page>.matrix.json`), its cells judged by the matrix file as it is now (its
    /// expectations and notes): nothing runs, the figures stay the runs', and the page says
    /// whether the expectations changed after the runs. Commit the file first.
    Render(MatrixRenderArgs),
}

#[derive(Debug, Args)]
pub struct MatrixDiffArgs {
    /// The older publication: its matrix.json, its matrix folder, or a store (its newest
    /// matrix).
    pub old: PathBuf,
    /// The newer one, the same way.
    pub new: PathBuf,
}

#[derive(Debug, Args)]
pub struct MatrixRenderArgs {
    /// The page (e.g. docs/library-matrix.md), written again in place with its record beside
    /// it (docs/library-matrix.matrix.json), which it is made from.
    pub page: PathBuf,
    /// The matrix file whose expectations and notes judge the cells (e.g.
    /// scenarios/matrix/libraries.toml).
    pub file: PathBuf,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards: each a store a `matrix --shard K/N` or `suite --shard K/N` run wrote into
    /// (its newest matrix and suite record), or that matrix's or suite record's folder.
    #[arg(required = true, value_name = "SHARD")]
    pub shards: Vec<PathBuf>,
    /// Where the merged matrix (STORE/matrix/<time>-merged/) and suite record
    /// (STORE/suite/<time>-merged/) go, with the runs' folders copied from the shards' stores.
    #[arg(long, default_value = "store")]
    pub store: PathBuf,
    /// Also write the merged matrix as markdown here.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Also write the merged suite's results as a JUnit file here.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}
