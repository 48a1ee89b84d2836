//! Command-line arguments.

mod bench;
mod explore;
mod matrix;

pub use bench::BenchArgs;
pub use explore::ExploreArgs;
pub use matrix::{MatrixAction, MatrixArgs, MatrixDiffArgs, MatrixRenderArgs, MergeArgs};

use crate::choices::{FormatArg, LockArg, ModelArg, PropertyArg};
use clap::{Args, Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;

/// Jepsen-style fault injection for distributed locks: runs real backends behind fault proxies,
/// records what clients saw, and checks whether mutual exclusion held.
///
/// Exit codes: 0 valid, 1 invalid (a safety violation), 2 unknown, 3 bad input, 4 harness
/// error, 5 suite mismatch, 6 incomplete run (check/report), 7 stuck (a deadlock: liveness),
/// 8 not exposed (no fault opened a window for a violation), 130 interrupted.
#[derive(Debug, Parser)]
#[command(name = "lockpick", version = lockpick_harness::LOCKPICK_BUILD)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a scenario (a name from `lockpick list`, or a path to a .toml file) and check it.
    Scenario(ScenarioArgs),
    /// List the shipped scenarios with their expected verdicts.
    List,
    /// Run every shipped scenario that declares an expected verdict, over one or more seeds,
    /// and fail (exit 5) if any run does not reach it: a nightly safety regression.
    Suite(SuiteArgs),
    /// Check a stored history again, offline (and write the run's report.html); with --model,
    /// check any Jepsen/Porcupine or lockpick history for linearizability.
    Check(CheckArgs),
    /// Print a lockpick history as Jepsen EDN op maps, one per line (for Knossos/Elle).
    Export(ExportArgs),
    /// Render a stored run's report.html again from its history and results, or a suite
    /// record's page (its folder, STORE/suite/<time>) and, with --markdown, its markdown.
    Report {
        /// The run folder (e.g. store/redis-gc-pause/latest), or a suite record's folder.
        run_dir: PathBuf,
        /// For a suite record: also write it as markdown here (per scenario: runs as
        /// expected, the verdicts reached, the library and server versions the runs reported).
        #[arg(long, value_name = "FILE")]
        markdown: Option<PathBuf>,
    },
    /// Run one scenario's workload and fault schedule (same seed) on several backends and
    /// write compare.html side by side.
    Compare(CompareArgs),
    /// Run every lock (row) under every fault (column) of a matrix file over several seeds,
    /// fault sizes relative to each lock's lease, and write matrix.html.
    Matrix(MatrixArgs),
    /// Measure what each lock of a matrix file costs: grants per second, acquire latency
    /// p50/p99 and the servers' CPU per grant at several client counts, with no fault, hold
    /// or think time; writes STORE/bench/<time>/bench.md with charts.
    Bench(BenchArgs),
    /// Search for a fault schedule that breaks a scenario's lock: draw faults at random
    /// (kinds, how many, sizes 0.1× to 3× the lease) until a violation or the budget, then
    /// shrink it to a small scenario file that reproduces it, with its reproduction rate.
    Explore(ExploreArgs),
    /// Join the stores of a matrix's shards (`matrix --shard K/N`, one per machine) into one
    /// matrix folder with its matrix.json, matrix.html (and --markdown).
    Merge(MergeArgs),
    /// Serve the store's runs and reports on 127.0.0.1, until Ctrl-C.
    Serve(ServeArgs),
    /// Free the disk of finished and abandoned runs: delete their nodes' data folders
    /// (`nodes/*/data`), keep histories, results, reports, run records, configs and logs.
    /// Runs whose lockpick is still running are left alone.
    Gc {
        /// Root folder of stored runs.
        #[arg(long, default_value = "store")]
        store: PathBuf,
    },
    /// Serve the embedded Toxiproxy-compatible API alone, until Ctrl-C.
    Toxiproxy {
        /// Address of the HTTP API (an IP or a name such as localhost; loopback only).
        #[arg(long, default_value = "127.0.0.1:8474", value_parser = host_port)]
        listen: SocketAddr,
    },
}

#[derive(Debug, Args)]
pub struct ScenarioArgs {
    /// Scenario name or path.
    pub scenario: String,
    /// Seed for every random choice, 0 to 18446744073709551615 (default: the scenario's).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Workload length in seconds, 0.001 to 86400 (default: the scenario's); the fault
    /// schedule over it must stay within 100000 steps.
    #[arg(long, value_name = "SECONDS")]
    pub time_limit: Option<f64>,
    /// Soak: run the workload this long (`30m`, `1h`, `24h`; at most 24 h) with the
    /// scenario's faults recurring, its schedule drawn afresh every scenario length; the
    /// history is checked as it is written, this process's memory is sampled into
    /// `soak.json`, and the report sums the whole soak up and zooms in around violations.
    #[arg(long, value_name = "DURATION", conflicts_with = "time_limit", value_parser = soak)]
    pub soak: Option<SoakArg>,
    /// Number of concurrent clients, 1 to 1000 (default: the scenario's); a fault aimed at
    /// client k needs more than k.
    #[arg(long)]
    pub clients: Option<usize>,
    /// Use the Toxiproxy at HOST:PORT instead of the embedded one (HOST an IP or a name,
    /// resolved once, IPv4 first). It must run on this machine: its proxies are asked to
    /// listen on 127.0.0.1. Without this flag everything stays on loopback.
    #[arg(long, value_name = "HOST:PORT", value_parser = host_port)]
    pub toxiproxy: Option<SocketAddr>,
    /// Run on this lock instead of the scenario's (faults it cannot take are left out).
    #[arg(long, value_name = "LOCK")]
    pub backend: Option<LockArg>,
    /// Root folder of stored runs.
    #[arg(long, default_value = "store")]
    pub store: PathBuf,
    /// Keep the nodes' data folders after the run (by default only configs and logs stay).
    #[arg(long)]
    pub keep_data: bool,
    /// Use servers lockpick does not start (yours, or docker-compose's): the client address of
    /// each node n1, n2, … in order. Only client and network faults can run on them.
    #[arg(long, value_name = "HOST:PORT,…", value_delimiter = ',')]
    pub external: Vec<SocketAddr>,
    /// Use the redis-server at HOST:PORT as the protected resource instead of starting one
    /// (its `lockpick:resource:*` keys are cleared first).
    #[arg(long, value_name = "HOST:PORT")]
    pub resource: Option<SocketAddr>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Scenario name or path.
    pub scenario: String,
    /// Locks to run it on, comma-separated (e.g. redis,redis-naive,etcd).
    #[arg(long, value_name = "LOCK,…", value_delimiter = ',', required = true)]
    pub backends: Vec<LockArg>,
    /// Seed for every random choice, 0 to 18446744073709551615 (default: the scenario's).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Workload length in seconds, 0.001 to 86400 (default: the scenario's); the fault
    /// schedule over it must stay within 100000 steps.
    #[arg(long, value_name = "SECONDS")]
    pub time_limit: Option<f64>,
    /// Number of concurrent clients, 1 to 1000 (default: the scenario's); a fault aimed at
    /// client k needs more than k.
    #[arg(long)]
    pub clients: Option<usize>,
    /// Root folder of stored runs.
    #[arg(long, default_value = "store")]
    pub store: PathBuf,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on; must be a loopback address.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Root folder of stored runs.
    #[arg(long, default_value = "store")]
    pub store: PathBuf,
}

#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// Runs per scenario, 1 to 10000, with seeds scenario-seed, scenario-seed + 1, …
    #[arg(long, default_value_t = 1)]
    pub seeds: u64,
    /// Only scenarios whose name contains one of these texts (comma-separated); one in a
    /// group folder is named `group/name` here, so `--filter known-bugs` runs
    /// scenarios/known-bugs/.
    #[arg(long, value_delimiter = ',')]
    pub filter: Vec<String>,
    /// Root folder of stored runs; the suite's record and trend page go to `STORE/suite/<time>/`.
    #[arg(long, default_value = "store")]
    pub store: PathBuf,
    /// Also write the results as a JUnit XML file here (one testcase per scenario and seed).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Also write the suite record as markdown here, when the suite ends: per scenario, runs
    /// as expected, the verdicts reached, the library and server versions the runs reported
    /// (`lockpick report STORE/suite/<time> --markdown FILE` writes it again).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Start no new run once this many seconds have passed (0 < SECONDS <= 604800); the runs
    /// left out are reported as skipped.
    #[arg(long, value_name = "SECONDS", allow_hyphen_values = true)]
    pub time_budget: Option<f64>,
    /// Run only shard K of N of the suite's (scenario, seed) runs (1 <= K <= N), e.g. one CI
    /// job of N; `lockpick merge` joins the shards' stores into one record and JUnit file.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<lockpick_harness::matrix::Shard>,
    /// Use the Toxiproxy at HOST:PORT instead of the embedded one.
    #[arg(long, value_name = "HOST:PORT")]
    pub toxiproxy: Option<SocketAddr>,
    /// Run on servers lockpick does not start (see `scenario --external`); every selected
    /// scenario must be able to (use --filter).
    #[arg(long, value_name = "HOST:PORT,…", value_delimiter = ',')]
    pub external: Vec<SocketAddr>,
    /// Use the redis-server at HOST:PORT as the protected resource.
    #[arg(long, value_name = "HOST:PORT")]
    pub resource: Option<SocketAddr>,
    /// Start and stop the servers for every run. By default consecutive runs on the same
    /// server setup (a scenario's seeds) share one start, reset in between, unless a run's
    /// fault changed the servers in a way a reset cannot undo; this turns that off.
    #[arg(long)]
    pub fresh_servers: bool,
}

/// `--soak`: its text as given (for the command that repeats the run) and its length.
#[derive(Debug, Clone)]
pub struct SoakArg {
    pub text: String,
    pub ms: u64,
}

/// A soak's length: as `explore --budget` reads it, 1 s to 24 h (a run's longest workload).
fn soak(s: &str) -> Result<SoakArg, String> {
    let d = explore::budget(s)?;
    let ms = d.as_millis() as u64;
    let most = lockpick_harness::vocab::rules::MAX_RUN_MS;
    if ms > most {
        return Err(format!(
            "{s} is longer than a run may last; allowed: 1s to {}h",
            most / 3_600_000
        ));
    }
    Ok(SoakArg {
        text: s.trim().to_owned(),
        ms,
    })
}

/// Allowed `check --budget`, in seconds: a millisecond to a day.
pub const BUDGET_SECONDS: (f64, f64) = (0.001, 86_400.0);
/// Allowed `check --deadlock-ms`: as in a scenario's `check.deadlock_ms`, 1 ms to a day.
pub const DEADLOCK_MS: (u64, u64) = (1, 86_400_000);

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// A history.jsonl, or a run folder holding one.
    pub history: PathBuf,
    /// What must hold (default: the run's scenario.toml; without one, exclusive). An
    /// unreadable scenario.toml is an error unless this and --deadlock-ms are given.
    #[arg(long)]
    pub property: Option<PropertyArg>,
    /// Deadlock threshold in milliseconds, 1 to 86400000 (default: the run's scenario.toml;
    /// without one, 3000).
    #[arg(long, value_name = "MS",
          value_parser = crate::ranges::within(DEADLOCK_MS.0, DEADLOCK_MS.1, "ms"))]
    pub deadlock_ms: Option<u64>,
    /// Check linearizability against this model instead of the lock checks. Any history
    /// format is accepted then. A history with an operation the model does not take (or none
    /// it does) is refused, naming the line (exit 3); one with no operation at all is unknown
    /// (exit 2).
    #[arg(long)]
    pub model: Option<ModelArg>,
    /// History format for --model (default: detected from the first line that is not a `;`
    /// comment).
    #[arg(long, requires = "model")]
    pub format: Option<FormatArg>,
    /// Time budget for --model, in seconds, 0.001 to 86400; past it the verdict is unknown.
    #[arg(long, value_name = "SECONDS", requires = "model", default_value_t = 60.0,
          value_parser = crate::ranges::within(BUDGET_SECONDS.0, BUDGET_SECONDS.1, "seconds"))]
    pub budget: f64,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A lockpick history.jsonl, or a run folder holding one.
    pub history: PathBuf,
}

/// HOST:PORT with HOST an IP address or a name, resolved now; a name takes its first IPv4
/// address if it has one (`localhost` is 127.0.0.1, where Toxiproxy listens by default).
pub fn host_port(text: &str) -> Result<SocketAddr, String> {
    use std::net::ToSocketAddrs;
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let expected = "expected HOST:PORT, e.g. 127.0.0.1:8474 or localhost:8474";
    let addrs = text
        .to_socket_addrs()
        .map_err(|e| format!("{expected}: {e}"))?;
    lockpick_harness::addr::pick_resolved(addrs)
        .ok_or_else(|| format!("{expected}: {text} resolves to no address"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toxiproxy_of(value: &str) -> Result<Option<SocketAddr>, clap::Error> {
        let cli = Cli::try_parse_from(["lockpick", "scenario", "x", "--toxiproxy", value])?;
        match cli.command {
            Command::Scenario(args) => Ok(args.toxiproxy),
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn toxiproxy_takes_host_names_and_ips() {
        let by_name = toxiproxy_of("localhost:8474").unwrap().unwrap();
        assert!(by_name.ip().is_loopback(), "{by_name}");
        assert_eq!(by_name.port(), 8474);
        assert_eq!(
            toxiproxy_of("127.0.0.1:8474").unwrap(),
            Some(SocketAddr::from(([127, 0, 0, 1], 8474)))
        );
        assert_eq!(
            toxiproxy_of("[::1]:8474")
                .unwrap()
                .map(|a| a.ip().is_ipv6()),
            Some(true)
        );
        for bad in [
            "localhost",
            "localhost:port",
            "no-such-host.invalid:8474",
            "",
        ] {
            let err = toxiproxy_of(bad).unwrap_err().to_string();
            assert!(err.contains("HOST:PORT"), "{bad}: {err}");
        }
    }
}
