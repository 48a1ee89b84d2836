//! The on-disk records of a matrix, versioned here: one file per finished run
//! (`runs/<row>--<column>--seed<N>.json`, what resuming reads) and `matrix.json`, the whole
//! matrix with every cell aggregated.

use super::note::CellNote;
use serde::{Deserialize, Serialize};

/// Version of `matrix.json` and of the per-run files.
pub const MATRIX_VERSION: u32 = 1;
/// Folder of matrices under the store.
pub const MATRIX_DIR: &str = "matrix";

/// One finished run of a cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub v: u32,
    pub row: String,
    pub column: String,
    pub seed: u64,
    /// `valid`, `invalid`, `stuck`, `not-exposed` (`not-tested` before) or `unknown`; `None`
    /// when the harness failed.
    pub verdict: Option<String>,
    /// The harness error, if the run could not be made.
    pub error: Option<String>,
    /// Why no fault instance of the run opened a window for a violation (`not_tested`
    /// before exposure was judged per instance).
    #[serde(alias = "not_tested")]
    pub not_exposed: Option<String>,
    /// What exposed the run, when a fault did (`reached` before).
    #[serde(alias = "reached")]
    pub exposed_by: Option<String>,
    /// How many of the run's fault instances opened a window, of how many; `None` in records
    /// written before, and for a run the harness could not make.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exposed_instances: Option<(usize, usize)>,
    /// Safety violations found (listed and omitted); deadlocks and lockouts are not counted here.
    pub violations: u64,
    /// From the start of the workload to the start of the first violation.
    pub first_violation_ms: Option<f64>,
    pub acquires_ok: u64,
    pub acquires_tried: u64,
    /// Latency of the acquires that succeeded.
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub ops_per_sec: f64,
    /// The leases the history's grants recorded (min, max), if any.
    pub lease_ms: Option<(u64, u64)>,
    /// The run folder, relative to the store root.
    pub run: Option<String>,
    pub reproduce: String,
    pub secs: f64,
    /// The library and version the run's adapter said it runs (`redlock 5.0.0-beta.2`), for
    /// a row whose client is a library's adapter.
    #[serde(default)]
    pub library: Option<String>,
    /// The server and the version it reported (`etcd 3.6.16`), from the run's results.
    #[serde(default)]
    pub server_version: Option<String>,
    /// Its history checked again by a later lockpick (`matrix --recheck`), if it was: the
    /// verdict above is that check's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recheck: Option<Recheck>,
    /// How late the harness's runtime woke a 10 ms timer at worst during the workload, in
    /// ms (run.json's `runtime_stall`): how long the run's clients may have stood still for
    /// the harness's sake rather than the fault's. Absent in runs recorded before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_stall_ms: Option<u64>,
}

/// A recorded run's history checked again (`matrix --recheck`): by whom, when, and what the
/// run's verdict was before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recheck {
    /// The lockpick that checked it again (`lockpick 0.1.0`, and its commit when built in a
    /// checkout).
    pub by: String,
    /// When (UTC, as the matrix folders are named).
    pub at: String,
    /// The verdict the run was recorded with (`stuck`; `None`: the harness had failed).
    pub was: Option<String>,
}

impl RunSummary {
    /// A checked run of `row` × `column` with `verdict` and nothing else measured (one
    /// acquire, one second): what hand-built records (tests, and pages of runs known only by
    /// their verdicts) are made of.
    pub fn checked(row: &str, column: &str, seed: u64, verdict: &str) -> RunSummary {
        RunSummary {
            v: MATRIX_VERSION,
            row: row.into(),
            column: column.into(),
            seed,
            verdict: Some(verdict.into()),
            error: None,
            not_exposed: None,
            exposed_by: None,
            exposed_instances: None,
            violations: u64::from(verdict == "invalid"),
            first_violation_ms: None,
            acquires_ok: 1,
            acquires_tried: 1,
            p50_ms: None,
            p99_ms: None,
            ops_per_sec: 1.0,
            lease_ms: None,
            run: None,
            reproduce: String::new(),
            secs: 1.0,
            library: None,
            server_version: None,
            recheck: None,
            runtime_stall_ms: None,
        }
    }
}

/// What a cell shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "status", content = "detail")]
pub enum CellStatus {
    /// The lock cannot take the fault.
    NotApplicable(String),
    /// The lock could meet the fault, but lockpick cannot bring it to these servers here
    /// (libfaketime does not reach a Go binary's clock): it says nothing about the lock.
    NotInjectable(String),
    /// The row's setup cannot test the fault though the lock could meet it (the matrix file
    /// says why, e.g. a link of ours that does not run through the proxies): not run.
    Untestable(String),
    /// No run was made (yet).
    NotRun,
    /// No violation, and no run that a fault exposed (`not-tested` before).
    #[serde(alias = "not-tested")]
    NotExposed(String),
    /// No violation in `tested` runs that a fault exposed.
    Safe { tested: u64 },
    /// Safety violations in `k` of the `n` runs that could have shown one (a violation, or
    /// a fault that reached its size).
    Unsafe { k: u64, n: u64 },
    /// No violation at the matrix's fixed sizes, but `matrix --explore-safe` drew sizes and
    /// timings of the column's fault that break the lock: a violation of `class` (explore's
    /// name for what explains it) whose schedule reproduced in `hits` of `runs` re-runs.
    UnsafeExplored { class: String, hits: u32, runs: u32 },
    /// No safety violation, but a deadlock or a lockout (liveness) in `k` of `n` runs.
    Stuck { k: u64, n: u64 },
    /// No violation, but a run's check could not decide or a run failed.
    Unknown(String),
}

impl CellStatus {
    /// The CSS class and the short text of the heatmap.
    pub fn class(&self) -> &'static str {
        match self {
            CellStatus::NotApplicable(_) => "na",
            CellStatus::NotInjectable(_) => "notinjectable",
            CellStatus::Untestable(_) => "untestable",
            CellStatus::NotRun => "notrun",
            CellStatus::NotExposed(_) => "notexposed",
            CellStatus::Safe { .. } => "safe",
            CellStatus::Unsafe { .. } | CellStatus::UnsafeExplored { .. } => "unsafe",
            CellStatus::Stuck { .. } => "stuck",
            CellStatus::Unknown(_) => "unknown",
        }
    }
}

/// One cell, aggregated over its runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellSummary {
    pub row: String,
    pub column: String,
    pub status: CellStatus,
    /// `valid`, `invalid`, `stuck` or `n/a`, and why.
    pub expected: String,
    pub expected_why: String,
    /// The matrix file's note: what the runs showed that the expectation did not foresee,
    /// with its figures as placeholders and the seeds it names (rendered against `runs`).
    #[serde(default)]
    pub note: Option<CellNote>,
    /// The status disagrees with the expectation.
    pub mismatch: bool,
    /// Runs with a violation / runs made.
    pub violating_runs: u64,
    pub runs_made: u64,
    /// Median and max of the time to first violation, over the runs with one.
    pub first_violation_median_ms: Option<f64>,
    pub first_violation_max_ms: Option<f64>,
    pub acquires_ok: u64,
    pub acquires_tried: u64,
    /// Median of the runs' p50, worst of their p99.
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub ops_per_sec: Option<f64>,
    /// Concrete sizes of this cell's fault (`nemesis.duration_ms = 2x lease = 2000 ms`).
    pub sizes: Vec<String>,
    /// The lease the sizes were resolved from, and where it came from.
    pub lease_ms: u64,
    pub lease_from: String,
    /// The generated scenario file, relative to the matrix folder.
    pub scenario_file: Option<String>,
    pub runs: Vec<RunSummary>,
    /// What `matrix --explore-safe` searched in this cell, if it did.
    #[serde(default)]
    pub explored: Option<CellExplore>,
    /// The safety-violation rate over the runs that counted, with its interval; `None` when
    /// no run counted.
    #[serde(default)]
    pub rate: Option<Rate>,
}

/// `matrix --until`: seeds added to a cell until its answer is sure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Until {
    /// The upper bound of the violation rate (a fraction) at which a cell without a violation
    /// stops.
    pub bound: f64,
    /// The most seeds a cell gets.
    pub max_seeds: u64,
}

impl Until {
    /// Whether a cell with `k` violations in `n` runs that counted, of `made` runs, needs
    /// more: no violation yet, its interval's upper end still above the bound, and the bound
    /// still within reach: if every seed it has left counted, the cell would get there. A
    /// cell most of whose runs were not exposed cannot, and more seeds would only spend time
    /// (its page says what bound it reached, and that its runs were not exposed).
    pub fn open(&self, k: u64, n: u64, made: u64) -> bool {
        let above = crate::stats::clopper_pearson(0, n).is_none_or(|(_, high)| high > self.bound);
        let reachable = crate::stats::runs_until_bound(self.bound)
            .is_some_and(|need| n + self.max_seeds.saturating_sub(made) >= need);
        k == 0 && above && reachable
    }
}

/// A cell's safety-violation rate over the runs that could have shown a violation (a run
/// with one, or a run that a fault exposed), with its interval: what tells 0 of 10
/// (a rate below 31% at 95%) from 0 of 40 (below 9%).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    /// Runs with a safety violation, of the `n` that counted.
    pub k: u64,
    pub n: u64,
    /// Runs checked that did not count: their fault tested nothing, or the check could not
    /// decide.
    pub left_out: u64,
    /// The interval of the rate, as fractions.
    pub low: f64,
    pub high: f64,
    /// How the interval was made (`Clopper-Pearson, 95%`).
    pub method: String,
}

impl Rate {
    /// The rate of `k` violations in `n` runs that counted, `left_out` runs apart; `None`
    /// when none counted.
    pub fn of(k: u64, n: u64, left_out: u64) -> Option<Rate> {
        let (low, high) = crate::stats::clopper_pearson(k, n)?;
        Some(Rate {
            k,
            n,
            left_out,
            low,
            high,
            method: crate::stats::INTERVAL_METHOD.to_owned(),
        })
    }

    /// The interval for people, widened to what it prints (its low end rounded down, its
    /// high end up): `7–65%`, or `≤31%` when nothing was seen.
    pub fn interval_text(&self) -> String {
        if self.k == 0 {
            format!("≤{}", percent_up(self.high))
        } else {
            format!(
                "{}–{}",
                percent_number(self.low, f64::floor),
                percent_up(self.high)
            )
        }
    }

    /// The low end for people, rounded down: `2%`.
    pub fn low_text(&self) -> String {
        format!("{}%", percent_number(self.low, f64::floor))
    }

    /// The high end for people, rounded up: `31%` (what a bound claims is never less).
    pub fn high_text(&self) -> String {
        percent_up(self.high)
    }
}

/// A fraction as a percentage rounded up, whole above 1%, to a tenth below: `31%`, `0.4%`.
pub fn percent_up(x: f64) -> String {
    format!("{}%", percent_number(x, f64::ceil))
}

/// `x` as a percentage, whole above 1%, to a tenth below, rounded by `round` (a tiny
/// allowance first, so that 31.0000000001 stays 31).
fn percent_number(x: f64, round: fn(f64) -> f64) -> String {
    let p = 100.0 * x;
    let scale = if p > 0.0 && p < 1.0 { 10.0 } else { 1.0 };
    let nudge = if round(0.5) > 0.5 { -1e-9 } else { 1e-9 };
    let v = round(p * scale + nudge).clamp(0.0, 100.0 * scale) / scale;
    if scale > 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// What `matrix --explore-safe` did in one cell that came out safe on the matrix's fixed
/// sizes: `lockpick explore` limited to the column's faults on the row's lock and workload.
/// Written as `explore/<row>--<column>.json` in the matrix folder (what resuming skips) and
/// carried in the cell of `matrix.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellExplore {
    pub v: u32,
    pub row: String,
    pub column: String,
    /// The search's budget and the time it took (searching and shrinking).
    pub budget_s: f64,
    pub elapsed_s: f64,
    /// Runs of the search phase, and faults drawn in them.
    pub runs: u64,
    pub faults_tried: u64,
    /// The fault kinds drawn from (the column's).
    pub faults: Vec<String>,
    /// explore's class of what it found (`nothing`, `lock-bug`, `kleppmann`, …) and what
    /// that class means.
    pub found: String,
    pub found_about: String,
    /// The found schedule's re-runs: in how many of how many it broke the lock again.
    /// `None` when nothing was found.
    pub reproduced: Option<(u32, u32)>,
    /// Whether the find reproduced as explore requires (`--repro`): only then does it break
    /// the cell.
    pub broke: bool,
    /// The find as one line (`client-pause after-acquire 2400 ms on client 1 at 0.800 s`),
    /// and the violation the checker reported.
    pub schedule: Option<String>,
    pub finding: Option<String>,
    /// The shrunk scenario file and the command that repeats it, when it was shrunk.
    pub scenario: Option<String>,
    pub repeat: Option<String>,
    /// The exploration's folder (explore.json, explore.html), relative to the store root.
    pub dir: String,
    /// Why the search stopped.
    pub stopped: String,
    /// The command that makes the same search again.
    pub command: String,
}

/// Folder of a matrix's explorations (one summary per explored cell).
pub const MATRIX_EXPLORE_DIR: &str = "explore";

/// A row of the matrix as the page shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowInfo {
    pub name: String,
    pub lock: String,
    pub server: String,
    pub client: String,
    pub fenced: bool,
    pub ttl_ms: u64,
    pub about: String,
    /// For a library's adapter: the library and version its runs reported (several, joined,
    /// if runs disagree), or why there is none yet.
    #[serde(default)]
    pub library: Option<String>,
    /// The server and the version its runs reported (`etcd 3.6.16`; several, joined, if runs
    /// disagree), for a server kind that reports one.
    #[serde(default)]
    pub server_version: Option<String>,
    /// How the row's clients use a granted lock: `trusting` (write at once) or `careful`
    /// (check the lease first); absent in matrices written before it was shown.
    #[serde(default)]
    pub discipline: Option<String>,
}

/// A column as the page shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnInfo {
    pub name: String,
    pub about: String,
}

/// `matrix.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixRecord {
    pub v: u32,
    pub name: String,
    pub description: String,
    /// The folder's name: when the matrix was started (UTC).
    pub started: String,
    pub updated: String,
    /// The build that made the runs: a page made again from them (`--report-only`, even with
    /// `--recheck`, whose checking build each run names) keeps it.
    pub lockpick_version: String,
    /// `server: version` of every server binary the rows use.
    pub server_versions: Vec<(String, String)>,
    /// The command that made (or resumes) this matrix.
    pub command: String,
    /// The folder of the matrix file as given, against which its relative paths (an
    /// adapter's command) resolve when the copy in the matrix folder is read again.
    #[serde(default)]
    pub file_folder: Option<String>,
    pub seeds: u64,
    /// With `matrix --until`: each cell got seeds past `seeds` until its violation rate's
    /// upper bound was at most `bound` or it had a violation, up to `max_seeds` per cell.
    #[serde(default)]
    pub until: Option<Until>,
    pub interrupted: bool,
    /// `K/N` when this folder holds shard K of N of the matrix's runs (`--shard`): its other
    /// runs are in the other shards' stores, and `lockpick merge` joins them.
    #[serde(default)]
    pub shard: Option<String>,
    /// For a merged matrix: the shards (`K/N`) whose stores were not given, so their runs are
    /// missing here (never counted as safe).
    #[serde(default)]
    pub missing_shards: Vec<String>,
    pub rows: Vec<RowInfo>,
    pub columns: Vec<ColumnInfo>,
    pub cells: Vec<CellSummary>,
    /// Where the expectations the cells are checked against came from when the runs began;
    /// `None` in records written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expectations: Option<ExpectationSource>,
}

/// The matrix file as version control had it when a matrix's first run began: whether its
/// expectations were committed before the runs, so that a page can say they were not fitted
/// to the results (an expectation changed after the runs is a commit of its own).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpectationSource {
    /// The matrix file as given.
    pub file: String,
    /// The last commit that changed it (`git log -1 -- FILE`), with its date; `None` outside a
    /// git checkout or for a file git does not track.
    pub commit: Option<String>,
    pub committed: Option<String>,
    /// The file had changes not committed when the runs began.
    pub uncommitted: bool,
    /// Why git could not say, when it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
    /// The file as git had it when the page was rendered again with it (`--resume DIR FILE`),
    /// if it had changed since the runs began: the cells show those expectations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_after: Option<Box<ExpectationSource>>,
}

impl ExpectationSource {
    /// A sentence for the page.
    pub fn sentence(&self) -> String {
        let before = self.sentence_before();
        match self.changed_after.as_deref() {
            None => before,
            Some(now) => match (&now.commit, now.uncommitted) {
                (Some(commit), false) => format!(
                    "{before} Changed after the runs, up to commit {} ({}), in commits of their own that say why: the cells are judged by the file as it is now.",
                    &commit[..commit.len().min(12)],
                    now.committed.as_deref().unwrap_or("date unknown")
                ),
                (_, _) => format!(
                    "{before} **Changed after the runs and not committed**: the cells are judged by expectations written after seeing these results."
                ),
            },
        }
    }

    fn sentence_before(&self) -> String {
        match (&self.commit, &self.unknown) {
            (_, Some(why)) => format!(
                "Expectations: from `{}`, whose history git could not tell ({why}): nothing shows they were written before the runs.",
                self.file
            ),
            (Some(commit), None) if !self.uncommitted => format!(
                "Expectations: from `{}` as committed in {} ({}), before these runs began.",
                self.file,
                &commit[..commit.len().min(12)],
                self.committed.as_deref().unwrap_or("date unknown")
            ),
            (Some(commit), None) => format!(
                "Expectations: from `{}`, **with changes not committed when the runs began** (last commit {}): they may have been written after seeing results.",
                self.file,
                &commit[..commit.len().min(12)]
            ),
            (None, None) => format!(
                "Expectations: from `{}`, **not committed when the runs began**: they may have been written after seeing results.",
                self.file
            ),
        }
    }
}

impl MatrixRecord {
    /// A record of `cells` alone, the rest placeholders: what the tests of pages, notes and
    /// diffs build on.
    pub fn of_cells(cells: Vec<CellSummary>) -> MatrixRecord {
        MatrixRecord {
            v: 1,
            name: "m".into(),
            description: String::new(),
            started: "t".into(),
            updated: "t".into(),
            lockpick_version: "0".into(),
            server_versions: Vec::new(),
            command: "c".into(),
            file_folder: None,
            seeds: 10,
            until: None,
            interrupted: false,
            shard: None,
            missing_shards: Vec::new(),
            rows: Vec::new(),
            columns: Vec::new(),
            cells,
            expectations: None,
        }
    }

    pub fn cell(&self, row: &str, column: &str) -> Option<&CellSummary> {
        self.cells
            .iter()
            .find(|c| c.row == row && c.column == column)
    }

    pub fn mismatches(&self) -> usize {
        self.cells.iter().filter(|c| c.mismatch).count()
    }
}

/// The folder the matrix in `dir` was first given in, as its `matrix.json` records it: the
/// relative paths of its copy `dir/matrix.toml` resolve against it.
pub fn recorded_folder(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    let bytes = std::fs::read(dir.join("matrix.json")).ok()?;
    let record: MatrixRecord = serde_json::from_slice(&bytes).ok()?;
    record.file_folder.map(std::path::PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::{ExpectationSource, Until};

    #[test]
    fn expectations_changed_after_the_runs_are_said_to_be() {
        let at = |commit: &str, uncommitted: bool| ExpectationSource {
            file: "m.toml".to_owned(),
            commit: Some(commit.to_owned()),
            committed: Some("2026-11-29".to_owned()),
            uncommitted,
            unknown: None,
            changed_after: None,
        };
        let mut e = at("aaaaaaaaaaaaaaaa", false);
        assert!(
            e.sentence().ends_with("before these runs began."),
            "{}",
            e.sentence()
        );
        e.changed_after = Some(Box::new(at("bbbbbbbbbbbbbbbb", false)));
        assert!(
            e.sentence()
                .contains("Changed after the runs, up to commit bbbbbbbbbbbb"),
            "{}",
            e.sentence()
        );
        e.changed_after = Some(Box::new(at("bbbbbbbbbbbbbbbb", true)));
        assert!(
            e.sentence()
                .contains("**Changed after the runs and not committed**"),
            "{}",
            e.sentence()
        );
    }

    #[test]
    fn until_stops_a_cell_at_its_bound_its_violation_or_when_the_bound_is_out_of_reach() {
        // 10%: 36 counted runs without a violation reach it (Clopper-Pearson, 95%).
        let u = Until {
            bound: 0.10,
            max_seeds: 50,
        };
        assert!(u.open(0, 10, 10));
        assert!(!u.open(0, 36, 36), "at its bound");
        assert!(!u.open(1, 10, 10), "a violation");
        // 14 not exposed of 14 made: 36 more would count, and reach it.
        assert!(u.open(0, 0, 14));
        // 15 not exposed of 15 made: only 35 seeds are left, which cannot.
        assert!(!u.open(0, 0, 15));
        assert!(!u.open(0, 20, 35));
        assert!(u.open(0, 21, 35));
    }
}
