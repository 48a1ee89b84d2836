//! `explore.json`, the on-disk record of one `lockpick explore` (`<store>/explore/<id>/`):
//! what was searched, each run, the find, the shrink steps and the shrunk scenario. The
//! harness writes it (rewritten after every run, so a killed search leaves what it did); the
//! explore page and the matrix's `--explore-safe` cells read it. One definition for both, here,
//! where on-disk formats are versioned ([`EXPLORE_RECORD_VERSION`]); fields added later are
//! `#[serde(default)]` so that older records still read.

use lockpick_checker::verdict::Verdict;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where explorations are stored, under the store.
pub const EXPLORE_DIR: &str = "explore";

/// The record's file in an exploration's folder.
pub const EXPLORE_FILE: &str = "explore.json";

/// The record's format. 1: the first (no `version` field, read as 1); 2: schedules carry the
/// drawn workload shape (`schedule.workload`), a `during-op` pause its request (`op`), and a
/// recurring pause its period (`every_ms`). Added inside 2, read as false when absent:
/// `shrunk.shrunk`, `shrunk.budget_ran_out`.
pub const EXPLORE_RECORD_VERSION: u32 = 2;

fn one() -> u32 {
    1
}

/// The workload shape a schedule runs with, when the search drew one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Workload {
    /// `workload.hold_ms`: `[min, max]`.
    pub hold_ms: [u64; 2],
    /// `workload.think_ms`: `[min, max]`.
    pub think_ms: [u64; 2],
    /// `lock.watchdog`: lockpick renews the lease every third of it while the lock is held.
    pub watchdog: bool,
}

impl Workload {
    /// `hold 300-600 ms, think 0-40 ms, watchdog on`.
    pub fn describe(&self) -> String {
        format!(
            "hold {}-{} ms, think {}-{} ms, watchdog {}",
            self.hold_ms[0],
            self.hold_ms[1],
            self.think_ms[0],
            self.think_ms[1],
            if self.watchdog { "on" } else { "off" }
        )
    }
}

/// One fault of a drawn schedule: concrete data (a node name, a client index, milliseconds),
/// never a range or a "random-one", so that the run's schedule is the drawn one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Drawn {
    /// The fault's name (`client-pause`, `latency`, …).
    pub fault: String,
    /// When it starts, from the start of the workload.
    pub at_ms: u64,
    /// Its size: a pause's, a partition's or a crash's length, a latency, a clock offset
    /// (signed by `negative`). 0 for faults without one (`client-crash`, `failover`).
    pub size_ms: u64,
    /// How long a fault whose size is not its length lasts (latency, clock jump and strobe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_ms: Option<u64>,
    /// The client a client fault stops (index from 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<usize>,
    /// Where a client fault stops it (`PausePoint` name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point: Option<String>,
    /// At point `during-op`: the one request it stops inside (`acquire`, `release`, `renew`).
    /// Absent in records of version 1 (any request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    /// The node a node fault hits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// A clock jump backwards rather than forwards.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub negative: bool,
    /// A client pause that comes again every this many milliseconds until the run ends
    /// (`every_ms`); absent: once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every_ms: Option<u64>,
}

impl Drawn {
    /// Its size as a multiple of `lease_ms` (0 for faults without one).
    pub fn factor(&self, lease_ms: u64) -> f64 {
        self.size_ms as f64 / lease_ms.max(1) as f64
    }

    /// When it is over, from the start of the workload.
    pub fn end_ms(&self) -> u64 {
        self.at_ms + self.window_ms.unwrap_or(self.size_ms)
    }
}

/// A schedule: the faults, the clients they run against, and the workload's shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    pub faults: Vec<Drawn>,
    pub clients: usize,
    /// The workload's length.
    pub duration_ms: u64,
    /// The drawn shape; `None` in records of version 1 (the scenario's own shape ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<Workload>,
}

/// What one run found, worst first when several apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Found {
    /// A safety violation the lock's own logic let happen.
    LockBug,
    /// A safety violation after a node's clock was moved: a lease trusts the server's clock.
    Clock,
    /// A safety violation after a node crashed: the server restarted without the lease it had
    /// granted (what it keeps across a crash is its persistence's, not the lock's code).
    NodeRestart,
    /// A holder that went on past its lease, with no fencing token to stop its writes.
    Kleppmann,
    /// No safety violation (a deadlock or an undecided check is not a find).
    Nothing,
}

impl Found {
    pub fn name(self) -> &'static str {
        match self {
            Found::LockBug => "lock-bug",
            Found::Clock => "clock",
            Found::NodeRestart => "node-restart",
            Found::Kleppmann => "kleppmann",
            Found::Nothing => "nothing",
        }
    }

    /// One sentence for the report.
    pub fn about(self) -> &'static str {
        match self {
            Found::LockBug => "the lock granted what it must not: a second holder while the first one's lease still ran, or a renewal of a lease that had run out",
            Found::Clock => "a node's clock was moved before the overlap, and a lease ended early by the server's clock",
            Found::NodeRestart => "a node crashed before the overlap and came back without the lease it had granted (its persistence)",
            Found::Kleppmann => "a holder went on past its lease (a pause or a grant that arrived late), with no fencing token to stop its writes: Kleppmann's case, which every lease lock without a fence has",
            Found::Nothing => "no safety violation",
        }
    }

    /// Whether the search stops at it: a bug of the lock, not what every lease lock has.
    pub fn stops_search(self) -> bool {
        match self {
            Found::LockBug => true,
            Found::Clock | Found::NodeRestart | Found::Kleppmann | Found::Nothing => false,
        }
    }
}

/// What a run was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    Search,
    /// Re-runs of a find, before it is believed.
    Reproduce,
    Shrink,
    Confirm,
}

impl Phase {
    /// The folder its scenario files go to, and its name in the record.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Search => "search",
            Phase::Reproduce => "reproduce",
            Phase::Shrink => "shrink",
            Phase::Confirm => "confirm",
        }
    }
}

/// How many re-runs must reproduce: `k` of `n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Need {
    pub k: u32,
    pub n: u32,
}

impl Need {
    /// Whether `hits` reproductions in `runs` re-runs already decide it: `Some(true)` once `k`
    /// reproduced, `Some(false)` once more than `n - k` did not, `None` while either can come.
    pub fn decided(self, hits: u32, runs: u32) -> Option<bool> {
        if hits >= self.k {
            Some(true)
        } else if runs - hits > self.n - self.k || runs >= self.n {
            Some(false)
        } else {
            None
        }
    }

    /// The reproductions in `runs` runs that hold this rate: `k/n` of them, rounded up
    /// (8 of 10 for 4/5).
    pub fn hits_in(self, runs: u32) -> u32 {
        (self.k * runs).div_ceil(self.n)
    }

    /// Reads `K/N`, 1 ≤ K ≤ N ≤ 100.
    pub fn parse(s: &str) -> Result<Need, String> {
        let bad = || format!("{s:?} is not K/N; allowed: K/N with 1 <= K <= N <= 100, e.g. 4/5");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (k, n): (u32, u32) = (
            k.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if k == 0 || k > n || n > 100 {
            return Err(bad());
        }
        Ok(Need { k, n })
    }
}

/// A fault the lock's servers cannot take, or that `--faults` left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOut {
    pub fault: String,
    pub reason: String,
}

/// One run of the search.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Try {
    /// 1-based, in the order run.
    pub n: usize,
    pub phase: Phase,
    pub seed: u64,
    pub schedule: Schedule,
    /// The scenario file it ran.
    pub file: PathBuf,
    /// Its stored run, when it ran.
    pub run: Option<PathBuf>,
    pub verdict: Option<Verdict>,
    pub found: Found,
    /// The first safety violation's sentence.
    pub finding: Option<String>,
    /// A run that could not be carried out.
    pub error: Option<String>,
    /// Seconds since the search began, when it ended.
    pub at_s: f64,
}

/// One reduction measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ShrinkStep {
    pub change: String,
    pub schedule: Schedule,
    pub hits: u32,
    pub runs: u32,
    pub kept: bool,
}

/// The shrunk scenario.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Shrunk {
    pub file: PathBuf,
    pub schedule: Schedule,
    /// Reproductions in the confirming re-runs.
    pub hits: u32,
    pub runs: u32,
    /// The seed the command below runs with: the first confirming run that reproduced.
    pub seed: u64,
    pub command: String,
    /// What shrinking took away, in order.
    pub removed: Vec<String>,
    /// Whether the find reproduced reliably enough to be shrunk.
    #[serde(default)]
    pub shrunk: bool,
    /// Whether shrinking stopped at its budget with changes left to try.
    #[serde(default)]
    pub budget_ran_out: bool,
}

/// Everything one exploration did: `explore.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExploreRecord {
    /// [`EXPLORE_RECORD_VERSION`] when written.
    #[serde(default = "one")]
    pub version: u32,
    pub id: String,
    pub dir: PathBuf,
    pub base: String,
    pub base_file: PathBuf,
    pub seed: u64,
    pub budget_s: f64,
    pub shrink_budget_s: f64,
    pub need: Need,
    pub lease_ms: u64,
    /// The faults drawn from.
    pub faults: Vec<String>,
    pub left_out: Vec<LeftOut>,
    /// Whether the workload's shape was drawn too (hold, think, clients, watchdog, length).
    #[serde(default)]
    pub workload_drawn: bool,
    pub tries: Vec<Try>,
    /// The try (its `n`) whose violation was shrunk.
    pub found: Option<usize>,
    pub found_class: Found,
    pub found_about: String,
    pub shrink: Vec<ShrinkStep>,
    pub shrunk: Option<Shrunk>,
    /// Why the search stopped.
    pub stopped: String,
    pub elapsed_s: f64,
    pub done: bool,
}

impl ExploreRecord {
    /// Runs of the search phase.
    pub fn searched(&self) -> impl Iterator<Item = &Try> {
        self.tries.iter().filter(|t| t.phase == Phase::Search)
    }

    /// Writes `dir/explore.json` whole or not at all.
    pub fn write(&self) -> std::io::Result<()> {
        let json = serde_json::to_vec_pretty(self).expect("an exploration serializes");
        crate::write_atomic(&self.dir.join(EXPLORE_FILE), &json)
    }
}

/// Why `explore.json` could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadRecordError {
    #[error("read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("parse {path}: {message}")]
    Parse { path: PathBuf, message: String },
}

/// Reads `dir/explore.json`; a record newer than this lockpick is refused by name.
pub fn read_explore_record(dir: &Path) -> Result<ExploreRecord, ReadRecordError> {
    let path = dir.join(EXPLORE_FILE);
    let text = std::fs::read_to_string(&path).map_err(|source| ReadRecordError::Read {
        path: path.clone(),
        source,
    })?;
    let record: ExploreRecord =
        serde_json::from_str(&text).map_err(|e| ReadRecordError::Parse {
            path: path.clone(),
            message: e.to_string(),
        })?;
    if record.version > EXPLORE_RECORD_VERSION {
        return Err(ReadRecordError::Parse {
            path,
            message: format!(
                "record version {} is newer than this lockpick's ({EXPLORE_RECORD_VERSION}); update lockpick",
                record.version
            ),
        });
    }
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_is_decided_as_soon_as_it_is_certain() {
        let need = Need { k: 8, n: 10 };
        assert_eq!(need.decided(8, 8), Some(true));
        assert_eq!(need.decided(7, 9), None);
        assert_eq!(
            need.decided(5, 8),
            Some(false),
            "3 misses: 8 of 10 is out of reach"
        );
        assert_eq!(need.decided(6, 8), None);
        assert_eq!(Need { k: 4, n: 5 }.hits_in(10), 8);
        assert_eq!(Need { k: 2, n: 3 }.hits_in(10), 7, "6.67 rounds up");
        assert_eq!(Need { k: 1, n: 1 }.hits_in(10), 10);
        assert_eq!(Need::parse("4/5"), Ok(Need { k: 4, n: 5 }));
        assert!(Need::parse("6/5").is_err());
        assert!(Need::parse("0/5").is_err());
        assert!(Need::parse("x").unwrap_err().contains("allowed: K/N"));
    }

    #[test]
    fn a_version_1_record_reads_and_a_newer_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let v1 = serde_json::json!({
            "id": "x", "dir": dir.path(), "base": "toy", "base_file": "t.toml", "seed": 1,
            "budget_s": 1.0, "shrink_budget_s": 1.0, "need": {"k": 1, "n": 1}, "lease_ms": 1000,
            "faults": ["latency"], "left_out": [],
            "tries": [{"n": 1, "phase": "search", "seed": 1,
                "schedule": {"faults": [{"fault": "latency", "at_ms": 1, "size_ms": 2}], "clients": 4, "duration_ms": 5000},
                "file": "f", "run": null, "verdict": "valid", "found": "nothing", "finding": null, "error": null, "at_s": 1.0}],
            "found": null, "found_class": "nothing", "found_about": "", "shrink": [], "shrunk": null,
            "stopped": "", "elapsed_s": 1.0, "done": true
        });
        std::fs::write(dir.path().join(EXPLORE_FILE), v1.to_string()).unwrap();
        let r = read_explore_record(dir.path()).unwrap();
        assert_eq!(r.version, 1);
        assert_eq!(r.tries[0].schedule.workload, None);
        assert_eq!(r.searched().count(), 1);
        let mut newer = r.clone();
        newer.version = EXPLORE_RECORD_VERSION + 1;
        newer.write().unwrap();
        let err = read_explore_record(dir.path()).unwrap_err().to_string();
        assert!(err.contains("newer than this lockpick"), "{err}");
        newer.version = EXPLORE_RECORD_VERSION;
        newer.tries[0].schedule.workload = Some(Workload {
            hold_ms: [300, 600],
            think_ms: [0, 20],
            watchdog: true,
        });
        newer.write().unwrap();
        let back = read_explore_record(dir.path()).unwrap();
        assert_eq!(back.tries[0].schedule, newer.tries[0].schedule);
    }
}
