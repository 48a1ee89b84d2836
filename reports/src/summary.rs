//! The terminal summary printed at the end of a run and by `lockpick check`.

use lockpick_checker::lock::{FindingKind, LockReport, Property};
use lockpick_checker::results::{LinSummary, RunResults};
use lockpick_checker::verdict::Verdict;
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
    // A library run is named by its library first: `Redisson 3.52.0 (process@redis)`.
    let lock = match &results.library {
        Some(library) => format!("{library} ({})", results.backend),
        None => results.backend.clone(),
    };
    let _ = writeln!(
        out,
        "{} on {lock}, seed {}: {}{}{}",
        results.scenario,
        results.seed,
        results.verdict.headline(),
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
    if let Some(exposures) = &results.exposures {
        for line in crate::exposure_text(exposures).lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    if let (Verdict::NotExposed, Some(why)) = (results.verdict, &results.not_exposed) {
        let _ = writeln!(out, "  NOT EXPOSED: {why}");
    }
    if results.verdict == Verdict::Stuck {
        let _ = writeln!(
            out,
            "  STUCK is liveness, not safety: no safety violation was found"
        );
    }
    let (violations, cut) = findings(&results.lock);
    out.push_str(&violations);
    if cut {
        let _ = writeln!(
            out,
            "  (the first {} of each kind; every one is in {} and {})",
            lockpick_checker::lock::PRINTED_PER_KIND,
            dir.join("report.html").display(),
            dir.join("results.json").display()
        );
    }
    if let Some(lin) = &results.linearizability {
        for line in lin_text(lin).lines() {
            let _ = writeln!(out, "  {line}");
        }
        if let Some(note) = lin_note(results.lock.property, lin) {
            let _ = writeln!(out, "  {note}");
        }
    }
    let _ = writeln!(out, "  store: {}", dir.display());
    let _ = writeln!(out, "  reproduce: {}", results.reproduce);
    out
}

/// What a linearizability violation means for the verdict under `property`, when it is not
/// what it says: under `fenced` the lease the lock broke is an observation.
pub fn lin_note(property: Property, lin: &LinSummary) -> Option<&'static str> {
    match (property, lin.verdict) {
        (Property::Fenced, Verdict::Invalid) => Some(
            "(an observation under property fenced: the lock did not hold its lease, and the resource's token checks decide the verdict)",
        ),
        (Property::Fenced, Verdict::Unknown) => Some(
            "(under property fenced the resource's token checks decide the verdict; this search's outcome does not change it)",
        ),
        (Property::Fenced | Property::Exclusive, _) => None,
    }
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

/// The first violations of each kind with the count of the rest, then observations, one
/// line each; and whether violations were left out.
fn findings(report: &LockReport) -> (String, bool) {
    let mut out = String::new();
    let (lines, cut) = report.violation_lines(lockpick_checker::lock::PRINTED_PER_KIND);
    for line in lines {
        let _ = writeln!(out, "  {line}");
    }
    // Observations too: the first few of each kind, then how many more.
    let mut printed: Vec<(FindingKind, usize)> = Vec::new();
    let mut unprinted = report.omitted_observations;
    for o in &report.observations {
        let n = match printed.iter_mut().find(|(k, _)| *k == o.kind) {
            Some((_, n)) => n,
            None => {
                printed.push((o.kind, 0));
                &mut printed.last_mut().expect("just pushed").1
            }
        };
        if *n < lockpick_checker::lock::PRINTED_PER_KIND {
            *n += 1;
            let _ = writeln!(out, "  observed {}: {}", o.kind, o.summary);
        } else {
            unprinted += 1;
        }
    }
    if unprinted > 0 {
        let _ = writeln!(out, "  … and {unprinted} more observation(s)");
    }
    // What the library told its holders, beside when they lost the lock.
    let per_kind = lockpick_checker::lock::PRINTED_PER_KIND;
    for l in report.learned.iter().take(per_kind) {
        let _ = writeln!(out, "  TOLD: {}", l.summary);
    }
    let more = report.learned.len().saturating_sub(per_kind) as u64 + report.omitted_learned;
    if more > 0 {
        let _ = writeln!(
            out,
            "  … and {more} more notice(s) from the library (the report lists them)"
        );
    }
    for u in &report.unknowns {
        let _ = writeln!(out, "  UNKNOWN: {u}");
    }
    (out, cut)
}
