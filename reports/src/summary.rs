//! The terminal summary printed at the end of a run and by `lockpick check`.

use lockpick_checker::lock::LockReport;
use lockpick_checker::results::{LinSummary, RunResults};
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
    if let Some(lin) = &results.linearizability {
        for line in lin_text(lin).lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    let _ = writeln!(out, "  store: {}", dir.display());
    let _ = writeln!(out, "  reproduce: {}", results.reproduce);
    out
}

/// The linearizability check of a run: one line, then the explanation of a violation.
pub fn lin_text(lin: &LinSummary) -> String {
    let mut text = format!(
        "linearizability ({} model): {} in {:.1} ms, {} ops\n",
        lin.model, lin.verdict, lin.elapsed_ms, lin.ops
    );
    if let Some(r) = &lin.unknown_reason {
        let _ = writeln!(text, "  undecided: {r}");
    }
    if let Some(e) = &lin.explanation {
        // The first line repeats the verdict line above.
        for line in e.lines().skip(1) {
            let _ = writeln!(text, "{line}");
        }
    }
    text
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
