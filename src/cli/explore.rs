//! `lockpick explore`'s arguments, and the reading of a time budget (`10m`, `90s`, `1h`).

use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct ExploreArgs {
    /// Scenario name or path: its lock, workload and lease; its own faults are replaced by
    /// the drawn ones. With --row: a matrix file.
    pub scenario: String,
    /// Explore this row of the matrix file given instead of a scenario: its lock, lease and
    /// workload as the matrix runs them.
    #[arg(long, value_name = "ROW")]
    pub row: Option<String>,
    /// With --row: start from the row's cell under this column (its server setup, say the
    /// clocks under libfaketime for a clock column) instead of the first column's.
    #[arg(long, value_name = "COLUMN", requires = "row")]
    pub column: Option<String>,
    /// How long to search for a violation: `30s`, `10m`, `1h` (a number alone is seconds).
    #[arg(long, default_value = "10m", value_parser = budget)]
    pub budget: Duration,
    /// Seed of the draw, 0 to 18446744073709551615 (default: the scenario's); the same seed
    /// draws the same schedules.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Draw only these faults, comma-separated (e.g. latency,partition; see `[[nemesis]]
    /// fault` in docs/scenarios.md for the names).
    #[arg(long, value_name = "FAULT,…", value_delimiter = ',')]
    pub faults: Option<Vec<String>>,
    /// Keep the scenario's workload shape (hold and think times, clients, watchdog); by
    /// default the search draws it too, holds spread over 0.01x to 1.5x of the lease.
    #[arg(long)]
    pub fixed_workload: bool,
    /// How long to shrink what was found, in the same units as --budget.
    #[arg(long, default_value = "10m", value_parser = budget)]
    pub shrink_budget: Duration,
    /// A shrinking step is kept when it reproduces in K of N re-runs (decided as soon as
    /// certain), 1 <= K <= N <= 100.
    #[arg(long, value_name = "K/N", default_value = "4/5")]
    pub repro: String,
    /// Re-runs of the shrunk scenario, all made, for the reproduction rate it reports
    /// (1 to 100).
    #[arg(long, default_value_t = 10)]
    pub confirm: u32,
    /// Root folder of stored runs; the exploration goes under `<store>/explore/`.
    #[arg(long, default_value = "store")]
    pub store: PathBuf,
    /// Use the Toxiproxy at HOST:PORT instead of the embedded one.
    #[arg(long, value_name = "HOST:PORT", value_parser = super::host_port)]
    pub toxiproxy: Option<SocketAddr>,
    /// Runs at once, 1 to 16: the search's draws, a shrinking candidate's re-runs and the
    /// confirming runs go this many at a time, each on servers of its own. Runs share the
    /// machine's cores, so many at once on few cores make pauses and timeouts less exact;
    /// the shrunk scenario is confirmed the same way, and repeats on its own with its
    /// command.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=16))]
    pub jobs: u16,
    /// Start and stop the servers for every run. By default each job keeps its servers up
    /// across its runs of the same setup and resets them in between (keys, rows, znodes,
    /// sessions and proxies cleared), unless a run's fault changed them in a way a reset
    /// cannot undo (a node crash, a failover, …).
    #[arg(long)]
    pub fresh_servers: bool,
}

/// A time budget: a number with `s`, `m` or `h`, or seconds alone; 1 s to 7 days.
pub fn budget(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let (num, unit) = match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => (&t[..i], &t[i..]),
        None => (t, "s"),
    };
    let bad = || {
        format!("{s:?} is not a time; allowed: seconds, or a number with s, m or h (30s, 10m, 1h), 1 s to 7 days")
    };
    let n: f64 = num.trim().parse().map_err(|_| bad())?;
    let secs = match unit {
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(bad()),
    };
    if !(1.0..=7.0 * 86400.0).contains(&secs) {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_read_with_their_units_and_refuse_the_rest_with_what_is_allowed() {
        assert_eq!(budget("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(budget("90"), Ok(Duration::from_secs(90)));
        assert_eq!(budget("1.5h"), Ok(Duration::from_secs(5400)));
        assert_eq!(budget("30s"), Ok(Duration::from_secs(30)));
        for bad in ["", "10x", "0s", "-1m", "8d", "m"] {
            assert!(
                budget(bad).unwrap_err().contains("allowed: seconds"),
                "{bad}"
            );
        }
    }
}
