//! Splitting a matrix's runs over N machines (`--shard K/N`): every (cell, seed) run goes to
//! exactly one shard, the same one on every machine, and the shards get about equal expected
//! time (a run costs its server's start and stop plus its workload), so N CI jobs finish
//! together. Pure: the split depends only on the runs and N, never on the machine or the clock.

use std::fmt;
use std::str::FromStr;

/// Shard `k` of `n` (1-based, as `--shard 2/4` and a CI job index + 1 write it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    pub k: u32,
    pub n: u32,
}

/// The most shards a matrix can be split into.
pub const MAX_SHARDS: u32 = 1000;

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || {
            format!("{s:?} is not a shard; allowed: K/N with 1 <= K <= N <= {MAX_SHARDS}, e.g. 2/4")
        };
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (k, n): (u32, u32) = (
            k.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if k == 0 || k > n || n > MAX_SHARDS {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

/// One run to place: its key (row, column, seed) and what it is expected to take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunCost {
    pub row: String,
    pub column: String,
    pub seed: u64,
    pub cost_ms: u64,
}

/// The shard (1-based) of each of `runs`, in their order, for `n` shards: the longest run
/// first onto the shard with the least expected time so far (ties: the lower shard), which
/// keeps the shards within one run's time of each other. Ties between runs are broken by
/// their key, so the input order does not matter.
pub fn assign(runs: &[RunCost], n: u32) -> Vec<u32> {
    let n = n.max(1) as usize;
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| {
        let (ra, rb) = (&runs[a], &runs[b]);
        rb.cost_ms
            .cmp(&ra.cost_ms)
            .then_with(|| (&ra.row, &ra.column, ra.seed).cmp(&(&rb.row, &rb.column, rb.seed)))
    });
    let mut load = vec![0u64; n];
    let mut out = vec![0u32; runs.len()];
    for i in order {
        let (least, _) = load
            .iter()
            .enumerate()
            .min_by_key(|&(s, l)| (*l, s))
            .expect("at least one shard");
        load[least] += runs[i].cost_ms;
        out[i] = least as u32 + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(row: &str, seed: u64, cost_ms: u64) -> RunCost {
        RunCost {
            row: row.to_owned(),
            column: "c".to_owned(),
            seed,
            cost_ms,
        }
    }

    #[test]
    fn shards_parse_and_bad_ones_say_what_is_allowed() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { k: 2, n: 4 }));
        assert_eq!(Shard { k: 2, n: 4 }.to_string(), "2/4");
        for bad in ["0/4", "5/4", "4", "a/b", "1/1001", ""] {
            let e = bad.parse::<Shard>().unwrap_err();
            assert!(e.contains("allowed: K/N"), "{bad}: {e}");
        }
    }

    #[test]
    fn every_run_goes_to_one_shard_whatever_the_input_order() {
        let runs: Vec<RunCost> = (0..30)
            .map(|i| run(&format!("r{}", i % 7), i, 1000 + (i * 7919) % 5000))
            .collect();
        let a = assign(&runs, 4);
        assert!(a.iter().all(|&s| (1..=4).contains(&s)));
        let mut reversed = runs.clone();
        reversed.reverse();
        let mut b = assign(&reversed, 4);
        b.reverse();
        assert_eq!(a, b, "the same runs land on the same shards in any order");
    }

    #[test]
    fn shards_are_within_one_run_of_each_other() {
        let runs: Vec<RunCost> = (0..40)
            .map(|i| run("r", i, 500 + (i * 104_729) % 9000))
            .collect();
        let n = 3;
        let shard = assign(&runs, n);
        let mut load = vec![0u64; n as usize];
        for (r, s) in runs.iter().zip(&shard) {
            load[*s as usize - 1] += r.cost_ms;
        }
        let longest = runs.iter().map(|r| r.cost_ms).max().unwrap();
        let (lo, hi) = (load.iter().min().unwrap(), load.iter().max().unwrap());
        assert!(hi - lo <= longest, "{load:?}, longest run {longest}");
    }

    #[test]
    fn more_shards_than_runs_leaves_some_empty() {
        let runs = vec![run("a", 1, 10), run("b", 1, 10)];
        let shard = assign(&runs, 5);
        assert_eq!(shard.len(), 2);
        assert_ne!(shard[0], shard[1]);
    }
}
