//! The comparison page (`compare.html`): one scenario's workload and faults on several
//! backends, side by side — verdicts per fault, violation counts, availability, acquire
//! latency, throughput, and links to each run's report.

use crate::error::ReportError;
use crate::quantiles::quantile;
use crate::templates::render;
use lockpick_checker::history::{EventKind, HistoryReader, Process, ReadError, F, RUN_ENDED};
use lockpick_checker::results::RunResults;
use lockpick_checker::verdict::Verdict;
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One fault of the scenario: a column of the verdict matrix.
#[derive(Debug, Clone)]
pub struct FaultColumn {
    /// How the scenario names it, e.g. "client-pause before-write".
    pub label: String,
    /// The nemesis verb its fault windows are recorded under (`pause`, `slow`, …).
    pub verb: F,
}

/// A backend that ran the scenario.
#[derive(Debug, Clone)]
pub struct ComparedRun {
    /// The run's store folder.
    pub dir: PathBuf,
    pub results: RunResults,
    /// Faults (by column position) this backend could not take, with the reason.
    pub skipped_faults: Vec<(usize, String)>,
}

/// One row of the comparison: a lock and its run. (A lock the build does not know is refused
/// before any run, so every row ran.)
#[derive(Debug, Clone)]
pub struct ComparedBackend {
    pub backend: String,
    pub run: ComparedRun,
}

/// Everything `compare.html` shows.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub scenario: String,
    pub seed: u64,
    pub faults: Vec<FaultColumn>,
    pub backends: Vec<ComparedBackend>,
    /// The command that repeats the comparison.
    pub reproduce: String,
}

#[derive(Debug, Serialize)]
struct Cell {
    class: String,
    text: String,
}

#[derive(Debug, Serialize)]
struct Row {
    backend: String,
    /// The library an adapter ran (`Redisson 3.52.0`), if recorded.
    library: Option<String>,
    /// The lease its grants carried: `300 ms`, `280–300 ms`, or `—`.
    lease: String,
    verdict: String,
    verdict_class: String,
    cells: Vec<Cell>,
    outside: String,
    violations: String,
    availability: String,
    p50: String,
    p99: String,
    throughput: String,
    report: String,
    dir: String,
}

#[derive(Debug, Serialize)]
struct Page {
    scenario: String,
    seed: u64,
    faults: Vec<String>,
    rows: Vec<Row>,
    /// Each lock's timeline, in the rows' order, on one time axis.
    timelines: Vec<String>,
    reproduce: String,
}

/// Renders the comparison. Report links are made relative to `out_dir`, where the page will
/// be written; run folders must be reachable from there by relative paths (both in one store).
pub fn render_comparison(c: &Comparison, out_dir: &Path) -> Result<String, ReportError> {
    let mut rows = Vec::new();
    for b in &c.backends {
        rows.push(ran_row(&b.backend, &b.run, &c.faults, out_dir)?);
    }
    let runs: Vec<(&Path, &RunResults)> = (c.backends.iter())
        .map(|b| (b.run.dir.as_path(), &b.run.results))
        .collect();
    let timelines = crate::compare_timelines::aligned_timelines(&runs)?;
    render(
        "compare.html",
        &Page {
            scenario: c.scenario.clone(),
            seed: c.seed,
            faults: c.faults.iter().map(|f| f.label.clone()).collect(),
            rows,
            timelines,
            reproduce: c.reproduce.clone(),
        },
    )
}

/// Writes `compare.html` into `out_dir` (created if needed); returns its path.
pub fn write_comparison(c: &Comparison, out_dir: &Path) -> Result<PathBuf, ReportError> {
    std::fs::create_dir_all(out_dir).map_err(|source| ReportError::Write {
        path: out_dir.to_owned(),
        source,
    })?;
    let html = render_comparison(c, out_dir)?;
    let path = out_dir.join("compare.html");
    lockpick_store::write_atomic(&path, html.as_bytes()).map_err(|source| ReportError::Write {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

fn ran_row(
    backend: &str,
    run: &ComparedRun,
    faults: &[FaultColumn],
    out_dir: &Path,
) -> Result<Row, ReportError> {
    let r = &run.results;
    let lock = &r.lock;
    let cells = faults
        .iter()
        .enumerate()
        .map(|(i, col)| {
            if let Some((_, why)) = run.skipped_faults.iter().find(|(j, _)| *j == i) {
                return Cell {
                    class: "skipped".to_owned(),
                    text: format!("skipped: {why}"),
                };
            }
            let n = lock
                .violations
                .iter()
                .filter(|v| v.faults.iter().any(|w| w.f == col.verb))
                .count();
            if n == 0 && r.verdict == Verdict::NotExposed {
                // No violation, but the fault fell short: it says nothing either way.
                Cell {
                    class: "not-exposed".to_owned(),
                    text: format!(
                        "not exposed: {}",
                        r.not_exposed
                            .as_deref()
                            .unwrap_or("the fault opened no window")
                    ),
                }
            } else if n == 0 {
                Cell {
                    class: "valid".to_owned(),
                    text: "no violation during it".to_owned(),
                }
            } else {
                Cell {
                    class: "invalid".to_owned(),
                    text: format!("{n} violation(s) during it"),
                }
            }
        })
        .collect();
    let outside = lock
        .violations
        .iter()
        .filter(|v| v.faults.is_empty())
        .count();
    let s = &lock.stats;
    let attempts = s.acquires_ok + s.acquires_fail + s.acquires_info;
    let availability = if attempts == 0 {
        "no acquires".to_owned()
    } else {
        format!(
            "{:.1}% ({}/{attempts})",
            100.0 * s.acquires_ok as f64 / attempts as f64,
            s.acquires_ok
        )
    };
    let (p50, p99, lease) = acquire_latency(&run.dir, r)?;
    let report = run.dir.join("report.html");
    Ok(Row {
        backend: backend.to_owned(),
        library: r.library.clone(),
        lease,
        verdict: r.verdict.name().to_owned(),
        verdict_class: r.verdict.name().to_owned(),
        cells,
        outside: outside.to_string(),
        violations: (lock.violations.len() as u64 + lock.omitted_violations).to_string(),
        availability,
        p50,
        p99,
        throughput: format!("{:.0} ops/s", r.ops_per_sec()),
        report: relative(out_dir, &report),
        dir: relative(out_dir, &run.dir),
    })
}

/// p50 and p99 latency of the acquires that succeeded, from the run's history.
/// p50 and p99 latency of the acquires that succeeded and the leases they carried, from the
/// run's history.
fn acquire_latency(dir: &Path, r: &RunResults) -> Result<(String, String, String), ReportError> {
    let path = dir.join(&r.history);
    let got = acquire_outcomes(&path).map_err(|e| ReportError::Parse {
        path: path.clone(),
        message: e.to_string(),
    })?;
    let lease = match got.lease_ms {
        Some((a, b)) if a == b => format!("{a} ms"),
        Some((a, b)) => format!("{a}–{b} ms"),
        None => "—".to_owned(),
    };
    let v = got.ok_ms;
    if v.is_empty() {
        return Ok(("—".to_owned(), "—".to_owned(), lease));
    }
    Ok((
        format!("{:.2} ms", quantile(&v, 0.5)),
        format!("{:.2} ms", quantile(&v, 0.99)),
        lease,
    ))
}

/// The latencies (ms, sorted) of the acquires that succeeded in the history at `path`, read
/// line by line (a soak's history need not fit in memory).
pub fn acquire_latencies(path: &Path) -> Result<Vec<f64>, ReadError> {
    Ok(acquire_outcomes(path)?.ok_ms)
}

/// How the acquires of one history ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AcquireOutcomes {
    /// Latencies (ms, sorted) of the acquires that succeeded.
    pub ok_ms: Vec<f64>,
    /// Acquires that definitely did not get the lock (`fail`).
    pub failed: u64,
    /// Acquires whose outcome is unknown (`info`).
    pub unknown: u64,
    /// The shortest and longest lease the granted acquires carried (what the lock or its
    /// adapter reported, else what was asked for), in milliseconds; none when none said.
    pub lease_ms: Option<(u64, u64)>,
}

/// The acquires of the history at `path`, read line by line: a client has one operation in
/// flight at a time, so its acquire's invocation is all there is to keep.
pub fn acquire_outcomes(path: &Path) -> Result<AcquireOutcomes, ReadError> {
    let mut reader = HistoryReader::open(path)?;
    let mut invoked: HashMap<u64, (u64, Option<u64>)> = HashMap::new();
    let mut out = AcquireOutcomes::default();
    while let Some(e) = reader.next_event()? {
        let (Process::Client(p), F::Acquire) = (e.process, e.f) else {
            continue;
        };
        match e.kind {
            EventKind::Invoke => {
                invoked.insert(p, (e.time_ns, e.value.lease_ms));
            }
            EventKind::Ok => {
                if let Some((t, asked)) = invoked.remove(&p) {
                    out.ok_ms.push(e.time_ns.saturating_sub(t) as f64 / 1e6);
                    if let Some(l) = e.value.lease_ms.or(asked) {
                        out.lease_ms =
                            Some(out.lease_ms.map_or((l, l), |(a, b)| (a.min(l), b.max(l))));
                    }
                }
            }
            EventKind::Fail => {
                invoked.remove(&p);
                out.failed += 1;
            }
            EventKind::Info => {
                invoked.remove(&p);
                // An acquire the workload's end cut short is lockpick's doing, not the lock's.
                if e.error.as_deref() != Some(RUN_ENDED) {
                    out.unknown += 1;
                }
            }
        }
    }
    out.ok_ms.sort_by(f64::total_cmp);
    Ok(out)
}

/// `to` as a path relative to the folder `from` when both lie under a common folder, else `to`
/// itself (absolute if it was).
pub(crate) fn relative(from: &Path, to: &Path) -> String {
    let abs = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned());
    let (from, to) = (abs(from), abs(to));
    let common = from
        .components()
        .zip(to.components())
        .take_while(|(a, b)| a == b)
        .count();
    if common == 0 {
        return to.display().to_string();
    }
    let ups = from.components().count() - common;
    let mut parts: Vec<String> = vec!["..".to_owned(); ups];
    parts.extend(
        to.components()
            .skip(common)
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_climb_to_the_common_folder() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("compare/x");
        let b = d.path().join("scen/run1");
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        assert_eq!(
            relative(&a, &b.join("report.html")),
            "../../scen/run1/report.html"
        );
    }
}
