//! The terminal summary printed at the end of a run and by `lockpick check`.

use lockpick_checker::lock::LockReport;
use lockpick_checker::results::RunResults;
use std::fmt::Write as _;
use std::path::Path;

/// The end-of-run summary: verdict against expectation, throughput, each violation in one line,
/// where the run is stored and how to repeat it.
pub fn text_summary(results: &RunResults, dir: &Path) -> String {
    let mut out = String::new();
    let expected = match results.expected {
        Some(e) if e == results.verdict => format!(" (expected {e}: as expected)"),
        Some(e) => format!(" (expected {e}: MISMATCH)"),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "{} on {}, seed {}: {}{}{}",
        results.scenario,
        results.backend,
        results.seed,
        results.verdict.name().to_uppercase(),
        expected,
        if results.interrupted {
            " — interrupted, partial history"
        } else {
            ""
        }
    );
    let _ = writeln!(
        out,
        "  workload {:.1} s, {} ops, {:.0} ops/s",
        results.workload_ms as f64 / 1000.0,
        results.ops,
        results.ops_per_sec()
    );
    out.push_str(&findings(&results.lock));
    let _ = writeln!(out, "  store: {}", dir.display());
    let _ = writeln!(out, "  reproduce: {}", results.reproduce);
    out
}

/// Violations, then observations, one line each.
fn findings(report: &LockReport) -> String {
    let mut out = String::new();
    for v in &report.violations {
        let _ = writeln!(out, "  VIOLATION {}: {}", v.kind, v.summary);
    }
    if report.omitted_violations > 0 {
        let _ = writeln!(
            out,
            "  … and {} more violation(s)",
            report.omitted_violations
        );
    }
    for o in &report.observations {
        let _ = writeln!(out, "  observed {}: {}", o.kind, o.summary);
    }
    if report.omitted_observations > 0 {
        let _ = writeln!(
            out,
            "  … and {} more observation(s)",
            report.omitted_observations
        );
    }
    for u in &report.unknowns {
        let _ = writeln!(out, "  UNKNOWN: {u}");
    }
    out
}
