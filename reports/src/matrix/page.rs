//! `matrix.html` (heatmap, per-fault charts, every cell's runs and reproduce commands) and
//! `matrix.json`, written whole or not at all into `store/matrix/<time>/`.

use super::note_render::rendered_note;
use super::record::{CellExplore, CellStatus, CellSummary, MatrixRecord, RunSummary};
use crate::charts::{availability_svg, first_violation_strip_svg, latency_bars_svg};
use crate::error::ReportError;
use crate::templates::render;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The short text of a cell in the heatmap.
pub fn cell_text(c: &CellSummary) -> String {
    match &c.status {
        CellStatus::NotApplicable(_) => "n/a".to_owned(),
        CellStatus::NotInjectable(_) => "not injectable here".to_owned(),
        CellStatus::NotRun => "not run".to_owned(),
        CellStatus::Untestable(_) => "not tested".to_owned(),
        CellStatus::NotExposed(_) => match &c.explored {
            Some(_) => "not exposed +explore".to_owned(),
            None => "not exposed".to_owned(),
        },
        CellStatus::Safe { tested } => match &c.explored {
            Some(_) => format!("safe 0/{tested}{} +explore", interval(c)),
            None => format!("safe 0/{tested}{}", interval(c)),
        },
        CellStatus::Unsafe { k, n } => format!("UNSAFE {k}/{n}{}", interval(c)),
        CellStatus::UnsafeExplored { .. } => "UNSAFE (explore)".to_owned(),
        CellStatus::Stuck { k, n } => format!("STUCK {k}/{n}"),
        CellStatus::Unknown(_) => "unknown".to_owned(),
    }
}

/// The cell's interval after its count, ` ≤31%` or ` 7–65%`, and the runs no fault exposed
/// apart (`, 3 not exposed`): the count is of exposed runs only; empty without a rate.
fn interval(c: &CellSummary) -> String {
    let apart = match not_exposed_runs(c) {
        0 => String::new(),
        n => format!(", {n} not exposed"),
    };
    c.rate
        .as_ref()
        .map_or(String::new(), |r| format!(" {}{apart}", r.interval_text()))
}

/// The cell's runs with no violation that no fault exposed (docs/exposure.md).
pub fn not_exposed_runs(c: &CellSummary) -> usize {
    (c.runs.iter())
        .filter(|r| r.not_exposed.is_some() && r.verdict.as_deref() != Some("invalid"))
        .count()
}

/// What a cell's rate says, in a sentence: the interval, and for a cell without a violation
/// the rate it rules out; with the runs that did not count.
pub fn rate_sentence(c: &CellSummary) -> String {
    let Some(r) = &c.rate else {
        return String::new();
    };
    let mut s = if r.k == 0 {
        format!(
            "; a violation in more than {} of exposed runs would have shown here with 95% confidence ({})",
            r.high_text(),
            r.method
        )
    } else {
        format!(
            "; the rate is {} to {} ({})",
            r.low_text(),
            r.high_text(),
            r.method
        )
    };
    if r.left_out > 0 {
        s.push_str(&format!(
            "; {} run(s) did not count (no fault exposed the lock, or the check could not decide)",
            r.left_out
        ));
    }
    s
}

/// The short text with `≠` when the cell disagrees with its expectation, for tables.
pub fn cell_label(c: &CellSummary) -> String {
    let mark = if c.mismatch { " ≠" } else { "" };
    format!("{}{mark}", cell_text(c))
}

/// The cell's status in a sentence.
pub fn cell_sentence(c: &CellSummary) -> String {
    format!("{}{}", status_sentence(c), unmade_runs(c))
}

/// The runs the harness could not make, said apart: they are in no count of the cell.
fn unmade_runs(c: &CellSummary) -> String {
    let seeds: Vec<String> = (c.runs.iter())
        .filter(|r| r.error.is_some())
        .map(|r| r.seed.to_string())
        .collect();
    if seeds.is_empty() {
        return String::new();
    }
    format!(
        "; the harness could not make {} run(s) (seed(s) {}), which say nothing about the lock (matrix.html gives each one's error)",
        seeds.len(),
        seeds.join(", ")
    )
}

/// What the cell's status says, in a sentence.
fn status_sentence(c: &CellSummary) -> String {
    match &c.status {
        CellStatus::NotApplicable(why) => format!("n/a: {why}"),
        CellStatus::NotInjectable(why) => format!(
            "not injectable here: {why} (the lock could meet this fault; this says nothing about it)"
        ),
        CellStatus::NotRun => "not run yet".to_owned(),
        CellStatus::Untestable(why) => format!("not tested: {why}"),
        CellStatus::NotExposed(why) => format!(
            "not exposed: {why}{}",
            c.explored
                .as_ref()
                .map_or(String::new(), |e| format!("; {}", explore_sentence(e)))
        ),
        CellStatus::Safe { tested } => format!(
            "no violation in {tested} run(s) that a fault exposed (of {}){}{}",
            c.runs_made,
            rate_sentence(c),
            c.explored
                .as_ref()
                .map_or(String::new(), |e| format!("; {}", explore_sentence(e)))
        ),
        CellStatus::Unsafe { k, n } => format!(
            "safety violations in {k} of {n} run(s) that could show one{}{}",
            rate_sentence(c),
            unexposed_violations(c)
        ),
        CellStatus::UnsafeExplored { .. } => format!(
            "no violation in the {} run(s) at the matrix's fixed sizes, but {}",
            c.runs_made,
            c.explored
                .as_ref()
                .map_or("explore broke it".to_owned(), explore_sentence)
        ),
        CellStatus::Stuck { k, n } => format!(
            "no safety violation; a deadlock or a lockout (liveness: nobody got the lock, or only one process did) in {k} of {n} run(s)"
        ),
        CellStatus::Unknown(why) => format!("unknown: {why}"),
    }
}

/// The violating runs in which no instance of the column's fault opened a window for a
/// violation (docs/exposure.md), said apart: they count as violations, but the fault is not
/// their likely cause.
fn unexposed_violations(c: &CellSummary) -> String {
    let seeds: Vec<String> = (c.runs.iter())
        .filter(|r| r.verdict.as_deref() == Some("invalid") && r.not_exposed.is_some())
        .map(|r| r.seed.to_string())
        .collect();
    match seeds.len() {
        0 => String::new(),
        m => format!(
            "; in {m} of them (seed(s) {}) no instance of the fault opened a window for a violation by the exposure rules (docs/exposure.md), so the workload or the machine, not this fault, is the likely cause",
            seeds.join(", ")
        ),
    }
}

/// What `matrix --explore-safe` did in a cell, in a sentence: how much it searched and
/// what it found.
pub fn explore_sentence(e: &CellExplore) -> String {
    let searched = format!(
        "explore searched {} run(s) ({} fault(s) of {} drawn) on a {:.0} s budget ({:.0} s in all with its re-runs)",
        e.runs,
        e.faults_tried,
        e.faults.join(", "),
        e.budget_s,
        e.elapsed_s
    );
    match (e.broke, e.reproduced, &e.schedule) {
        (_, None, _) | (_, _, None) => format!("{searched} and found no safety violation"),
        (true, Some((hits, runs)), Some(schedule)) => format!(
            "{searched} and broke it ({}: {}) with {schedule}, reproduced in {hits} of {runs} re-runs{}",
            e.found,
            e.found_about,
            e.repeat
                .as_ref()
                .map_or(String::new(), |r| format!("; repeat: {r}"))
        ),
        (false, Some((hits, runs)), Some(schedule)) => format!(
            "{searched}; it found {} once ({schedule}) but that reproduced in only {hits} of {runs} re-runs, so the cell stays safe",
            e.found
        ),
    }
}

#[derive(Serialize)]
struct HeatCell {
    class: &'static str,
    style: String,
    text: String,
    title: String,
    anchor: String,
    mismatch: bool,
    expected: String,
    expected_mark: String,
}

#[derive(Serialize)]
struct HeatRow {
    name: String,
    about: String,
    library: Option<String>,
    server_version: Option<String>,
    cells: Vec<HeatCell>,
}

#[derive(Serialize)]
struct ColumnView {
    name: String,
    about: String,
    strip: String,
    availability: String,
    latency: String,
}

#[derive(Serialize)]
struct RunRow {
    seed: u64,
    verdict: String,
    reach: String,
    first: String,
    report: Option<String>,
    reproduce: String,
}

#[derive(Serialize)]
struct Detail {
    anchor: String,
    row: String,
    column: String,
    status: String,
    badge: &'static str,
    expected: String,
    expected_why: String,
    /// The note, its figures filled from the runs; or, for a note the runs disagree with,
    /// what disagrees (the note's text is then not shown: it would be read as true).
    note: Option<String>,
    stale_note: Option<String>,
    mismatch: bool,
    sizes: Vec<String>,
    lease_ms: u64,
    lease_from: String,
    scenario_file: Option<String>,
    numbers: String,
    /// The command that runs the whole cell again.
    cell_command: String,
    /// `matrix --explore-safe`'s search of the cell: its page (relative to this one), and the
    /// command that makes the same search again.
    explore_page: Option<String>,
    explore_command: Option<String>,
    runs: Vec<RunRow>,
}

#[derive(Serialize)]
struct Page<'a> {
    #[serde(flatten)]
    record: &'a MatrixRecord,
    heat: Vec<HeatRow>,
    column_views: Vec<ColumnView>,
    details: Vec<Detail>,
    mismatches: usize,
    not_tested: usize,
    not_run: usize,
    resume: String,
    /// Which runs were checked again from their histories (`matrix --recheck`), in words.
    rechecked: Option<String>,
    /// With `--until`: how seeds were added past the first ones, in words.
    until: Option<String>,
}

fn anchor(c: &CellSummary) -> String {
    format!("cell-{}--{}", c.row, c.column)
}

/// The cell's numbers in a sentence.
pub fn cell_numbers(c: &CellSummary) -> String {
    let mut parts = Vec::new();
    if let (Some(med), Some(max)) = (c.first_violation_median_ms, c.first_violation_max_ms) {
        parts.push(format!(
            "first violation after {:.2} s (median), {:.2} s (max)",
            med / 1000.0,
            max / 1000.0
        ));
    }
    if c.acquires_tried > 0 {
        parts.push(format!(
            "availability {:.1}% ({}/{} acquires ok)",
            100.0 * c.acquires_ok as f64 / c.acquires_tried as f64,
            c.acquires_ok,
            c.acquires_tried
        ));
    }
    if let (Some(p50), Some(p99)) = (c.p50_ms, c.p99_ms) {
        parts.push(format!("acquire p50 {p50:.1} ms, p99 {p99:.1} ms"));
    }
    if let Some(ops) = c.ops_per_sec {
        parts.push(format!("{ops:.0} ops/s"));
    }
    if parts.is_empty() {
        "No run yet.".to_owned()
    } else {
        format!("{}.", parts.join("; "))
    }
}

fn run_row(r: &RunSummary) -> RunRow {
    RunRow {
        seed: r.seed,
        verdict: match (&r.verdict, &r.error) {
            (Some(v), _) => format!("{v} ({} violation(s))", r.violations),
            (None, Some(e)) => format!("error: {e}"),
            (None, None) => "—".to_owned(),
        },
        reach: match (&r.exposed_by, &r.not_exposed) {
            (_, Some(why)) => format!("not tested: {why}"),
            (Some(what), None) => what.clone(),
            (None, None) => "—".to_owned(),
        },
        first: r
            .first_violation_ms
            .map_or("—".to_owned(), |ms| format!("{:.2} s", ms / 1000.0)),
        // Run folders are relative to the store root; the page is two folders below it.
        report: r.run.as_ref().map(|d| format!("../../{d}/report.html")),
        reproduce: r.reproduce.clone(),
    }
}

/// The page's note of a cell: its text, or (stale) what disagrees. The page is rewritten after
/// every run, when a note about seeds not run yet cannot hold; refusing the page then would
/// stop the matrix, so the page marks the note and the markdown publication refuses it.
fn page_note(c: &CellSummary, record: &MatrixRecord) -> (Option<String>, Option<String>) {
    match rendered_note(c, record) {
        None => (None, None),
        Some(Ok(text)) => (Some(text), None),
        Some(Err(problems)) => (None, Some(problems.join("; "))),
    }
}

fn heat_cell(c: &CellSummary, record: &MatrixRecord) -> HeatCell {
    let class = c.status.class();
    let style = match c.status {
        // Broken only by the search: as red as a violation in half the runs.
        CellStatus::UnsafeExplored { .. } => {
            "background: rgba(198, 40, 40, 0.62); color: #fff".to_owned()
        }
        CellStatus::Unsafe { k, n } => {
            let rate = k as f64 / n.max(1) as f64;
            let alpha = 0.25 + 0.75 * rate;
            let text = if alpha > 0.55 { "#fff" } else { "#b71c1c" };
            format!("background: rgba(198, 40, 40, {alpha:.2}); color: {text}")
        }
        CellStatus::Stuck { k, n } => {
            let rate = k as f64 / n.max(1) as f64;
            let alpha = 0.25 + 0.75 * rate;
            let text = if alpha > 0.55 { "#fff" } else { "#4a148c" };
            format!("background: rgba(106, 27, 154, {alpha:.2}); color: {text}")
        }
        _ => String::new(),
    };
    HeatCell {
        class,
        style,
        text: cell_text(c),
        title: format!(
            "{}. Expected {}: {}{}",
            cell_sentence(c),
            c.expected,
            c.expected_why,
            match page_note(c, record) {
                (Some(n), _) => format!(". Note: {n}"),
                (None, Some(stale)) => format!(". Stale note, not shown: {stale}"),
                (None, None) => String::new(),
            }
        ),
        anchor: anchor(c),
        mismatch: c.mismatch,
        expected: c.expected.clone(),
        expected_mark: match c.status {
            CellStatus::Unsafe { .. }
            | CellStatus::UnsafeExplored { .. }
            | CellStatus::Stuck { .. }
            | CellStatus::Safe { .. } => "as expected".to_owned(),
            _ => String::new(),
        },
    }
}

/// Renders `matrix.html` for `record`.
pub fn render_matrix_page(record: &MatrixRecord, resume: &str) -> Result<String, ReportError> {
    let mut heat = Vec::new();
    for r in &record.rows {
        let cells = record
            .columns
            .iter()
            .filter_map(|c| record.cell(&r.name, &c.name))
            .map(|c| heat_cell(c, record))
            .collect();
        heat.push(HeatRow {
            name: r.name.clone(),
            about: r.about.clone(),
            library: r.library.clone(),
            server_version: r.server_version.clone(),
            cells,
        });
    }
    let names: Vec<String> = record.rows.iter().map(|r| r.name.clone()).collect();
    let mut column_views = Vec::new();
    for col in &record.columns {
        let cells: Vec<Option<&CellSummary>> = record
            .rows
            .iter()
            .map(|r| record.cell(&r.name, &col.name))
            .collect();
        let times: Vec<Vec<f64>> = cells
            .iter()
            .map(|c| {
                c.map_or(Vec::new(), |c| {
                    c.runs
                        .iter()
                        .filter_map(|r| r.first_violation_ms.map(|ms| ms / 1000.0))
                        .collect()
                })
            })
            .collect();
        let avail: Vec<Option<f64>> = cells
            .iter()
            .map(|c| {
                c.filter(|c| c.acquires_tried > 0)
                    .map(|c| 100.0 * c.acquires_ok as f64 / c.acquires_tried as f64)
            })
            .collect();
        let lat: Vec<Option<(f64, f64)>> = cells
            .iter()
            .map(|c| c.and_then(|c| c.p50_ms.zip(c.p99_ms)))
            .collect();
        column_views.push(ColumnView {
            name: col.name.clone(),
            about: col.about.clone(),
            strip: first_violation_strip_svg(&names, &times)?,
            availability: availability_svg(&names, &avail)?,
            latency: latency_bars_svg(&names, &lat)?,
        });
    }
    let details = record
        .cells
        .iter()
        .map(|c| Detail {
            anchor: anchor(c),
            note: page_note(c, record).0,
            stale_note: page_note(c, record).1,
            row: c.row.clone(),
            column: c.column.clone(),
            status: cell_sentence(c),
            badge: match c.status {
                CellStatus::Unsafe { .. } | CellStatus::UnsafeExplored { .. } => "invalid",
                CellStatus::Stuck { .. } => "stuck",
                CellStatus::Safe { .. } => "valid",
                CellStatus::NotExposed(_) => "not-exposed",
                CellStatus::Unknown(_) => "unknown",
                CellStatus::NotApplicable(_)
                | CellStatus::NotInjectable(_)
                | CellStatus::Untestable(_)
                | CellStatus::NotRun => "skipped",
            },
            expected: c.expected.clone(),
            expected_why: c.expected_why.clone(),
            mismatch: c.mismatch,
            sizes: c.sizes.clone(),
            lease_ms: c.lease_ms,
            lease_from: c.lease_from.clone(),
            scenario_file: c.scenario_file.clone(),
            numbers: cell_numbers(c),
            cell_command: format!("{resume} --rows {} --faults {} --redo", c.row, c.column),
            // Exploration folders are relative to the store root, two folders above the page.
            explore_page: c
                .explored
                .as_ref()
                .map(|e| format!("../../{}/explore.html", e.dir)),
            explore_command: c.explored.as_ref().map(|e| e.command.clone()),
            runs: c.runs.iter().map(run_row).collect(),
        })
        .collect();
    let count = |class: &str| {
        record
            .cells
            .iter()
            .filter(|c| c.status.class() == class)
            .count()
    };
    render(
        "matrix.html",
        &Page {
            record,
            heat,
            column_views,
            details,
            mismatches: record.mismatches(),
            not_tested: count("notexposed"),
            not_run: count("notrun"),
            resume: resume.to_owned(),
            rechecked: super::recheck_sentence(record),
            until: record.until.map(|u| {
                format!(
                    "then more until each cell had a violation or the 95% upper bound of its violation rate was at most {} (at most {} seeds, and not for a cell too few of whose runs were exposed to get there within them)",
                    super::record::percent_up(u.bound),
                    u.max_seeds
                )
            }),
        },
    )
}

/// Writes `matrix.json` and `matrix.html` into `dir`; returns the page's path.
pub fn write_matrix(
    record: &MatrixRecord,
    dir: &Path,
    resume: &str,
) -> Result<PathBuf, ReportError> {
    let json = serde_json::to_vec_pretty(record).expect("records serialize");
    crate::write_atomic(&dir.join("matrix.json"), &json)?;
    let html = render_matrix_page(record, resume)?;
    let page = dir.join("matrix.html");
    crate::write_atomic(&page, html.as_bytes())?;
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::cell::{aggregate, CellHead};

    #[test]
    fn a_stuck_cell_says_stuck_and_liveness_never_unsafe() {
        let head = head("node-redlock-v5", "partition", "invalid");
        let run = RunSummary {
            exposed_by: Some("the partition fault took effect".into()),
            acquires_ok: 10,
            acquires_tried: 30,
            ops_per_sec: 5.0,
            ..RunSummary::checked(&head.row, &head.column, 2, "stuck")
        };
        let c = aggregate(head, vec![run]);
        assert_eq!(cell_text(&c), "STUCK 1/1");
        assert_eq!(cell_label(&c), "STUCK 1/1 ≠");
        assert!(cell_sentence(&c).starts_with("no safety violation; a deadlock or a lockout"));
        let heat = heat_cell(&c, &MatrixRecord::of_cells(vec![c.clone()]));
        assert_eq!(heat.class, "stuck");
        assert!(heat.style.contains("106, 27, 154"), "{}", heat.style);
    }

    #[test]
    fn a_run_the_harness_could_not_make_is_named_apart_and_counted_nowhere() {
        let exposed = |seed| RunSummary {
            exposed_by: Some("no fault: every run counts".into()),
            ..RunSummary::checked("redisson", "none", seed, "valid")
        };
        let failed = crate::matrix::failed_run(
            crate::matrix::RunPlace {
                row: "redisson".into(),
                column: "none".into(),
                seed: 13,
                ..Default::default()
            },
            "it did not answer init".into(),
        );
        let c = aggregate(
            head("redisson", "none", "valid"),
            vec![exposed(1), exposed(2), failed],
        );
        let s = cell_sentence(&c);
        assert!(s.starts_with("no violation in 2 run(s)"), "{s}");
        assert!(
            s.ends_with("; the harness could not make 1 run(s) (seed(s) 13), which say nothing about the lock (matrix.html gives each one's error)"),
            "{s}"
        );
        let c = aggregate(head("redisson", "none", ""), vec![exposed(1)]);
        assert!(!cell_sentence(&c).contains("could not make"));
    }

    /// A cell of `row` × `column` expected `expected` (with a placeholder reason).
    fn head(row: &str, column: &str, expected: &str) -> CellHead {
        CellHead {
            row: row.into(),
            column: column.into(),
            expected: expected.into(),
            expected_why: "why".into(),
            ..CellHead::default()
        }
    }

    #[test]
    fn an_explored_cell_says_how_much_was_searched_and_what_broke_it() {
        use crate::matrix::cell::tests::explored;
        use crate::matrix::cell::with_exploration;
        let head = head("etcd", "pause", "valid");
        let safe = aggregate(head, Vec::new());
        let mut safe = safe;
        safe.status = CellStatus::Safe { tested: 10 };
        safe.runs_made = 10;
        let c = with_exploration(safe.clone(), Some(explored("nothing", None, false)));
        assert_eq!(cell_text(&c), "safe 0/10 +explore");
        let s = cell_sentence(&c);
        assert!(
            s.contains("explore searched 37 run(s) (61 fault(s) of client-pause drawn) on a 300 s budget (290 s in all with its re-runs) and found no safety violation"),
            "{s}"
        );
        let c = with_exploration(safe, Some(explored("kleppmann", Some((5, 5)), true)));
        assert_eq!(cell_label(&c), "UNSAFE (explore) ≠");
        let s = cell_sentence(&c);
        assert!(
            s.starts_with(
                "no violation in the 10 run(s) at the matrix's fixed sizes, but explore searched"
            ),
            "{s}"
        );
        assert!(s.contains("broke it (kleppmann: about) with client-pause after-acquire 2400 ms on client 1, reproduced in 5 of 5 re-runs; repeat: cargo run -- scenario x-shrunk.toml --seed 3"), "{s}");
        assert_eq!(
            heat_cell(&c, &MatrixRecord::of_cells(vec![])).class,
            "unsafe"
        );
        let page = render_matrix_page(&MatrixRecord::of_cells(vec![c]), "r")
            .unwrap()
            .replace("&#x2f;", "/");
        assert!(
            page.contains(r#"class="explore-page" href="../../explore/x/explore.html""#),
            "links the search: {page}"
        );
        assert!(page.contains("cargo run -- explore m.toml --row etcd --column pause"));
    }
}
