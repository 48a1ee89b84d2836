//! The suite trend page (`store/suite/<time>/index.html`): the verdict of every scenario on
//! every stored suite run ("night"), newest last, with the cells whose outcome changed from the
//! night before highlighted — a safety regression shows as a flip to red.

use crate::error::ReportError;
use crate::suite_record::{CaseStatus, SuiteRecord};
use crate::templates::render;
use serde::Serialize;
use std::path::Path;

/// At most this many nights are shown (the newest).
pub const MAX_NIGHTS: usize = 60;

#[derive(Debug, Serialize)]
struct Night {
    started: String,
    version: String,
    passed: usize,
    failed: usize,
    errors: usize,
    skipped: usize,
    interrupted: bool,
    link: String,
}

#[derive(Debug, Serialize)]
struct Cell {
    /// `pass`, `fail`, `error`, `skipped` or `absent`.
    class: &'static str,
    text: String,
    /// True when the outcome differs from the previous night that ran this scenario.
    flip: bool,
    title: String,
    /// The report of the first case that did not pass (or of the first run), from this page.
    link: Option<String>,
}

#[derive(Debug, Serialize)]
struct Row {
    scenario: String,
    expected: String,
    cells: Vec<Cell>,
    flips: usize,
}

#[derive(Debug, Serialize)]
struct Page {
    nights: Vec<Night>,
    rows: Vec<Row>,
    flips: usize,
    unreadable: Vec<String>,
    command: String,
}

/// Renders the trend page over `records` (oldest first), as seen from a page two folders below
/// the store root (`store/suite/<time>/`).
pub fn render_suite_page(
    records: &[SuiteRecord],
    unreadable: &[String],
) -> Result<String, ReportError> {
    let records = &records[records.len().saturating_sub(MAX_NIGHTS)..];
    let mut scenarios: Vec<(String, String)> = Vec::new();
    for r in records {
        for c in &r.cases {
            if !scenarios.iter().any(|(s, _)| *s == c.scenario) {
                scenarios.push((c.scenario.clone(), c.expected.clone()));
            }
        }
    }
    scenarios.sort();
    let nights = records
        .iter()
        .map(|r| Night {
            started: r.started.clone(),
            version: r.lockpick_version.clone(),
            passed: r.count(CaseStatus::Passed),
            failed: r.count(CaseStatus::Mismatch),
            errors: r.count(CaseStatus::Error),
            skipped: r.count(CaseStatus::Skipped),
            interrupted: r.interrupted,
            link: format!("../{}/suite.json", r.started),
        })
        .collect();
    let mut rows = Vec::new();
    for (scenario, expected) in scenarios {
        let mut previous: Option<&'static str> = None;
        let mut cells = Vec::new();
        let mut flips = 0;
        for r in records {
            let cell = cell(r, &scenario, previous);
            if cell.class != "absent" {
                if cell.flip {
                    flips += 1;
                }
                previous = Some(cell.class);
            }
            cells.push(cell);
        }
        rows.push(Row {
            scenario,
            expected,
            cells,
            flips,
        });
    }
    let flips = rows.iter().map(|r| r.flips).sum();
    render(
        "suite.html",
        &Page {
            nights,
            rows,
            flips,
            unreadable: unreadable.to_vec(),
            command: records
                .last()
                .map(|r| r.command.clone())
                .unwrap_or_default(),
        },
    )
}

/// One scenario on one night: the worst outcome of its seeds.
fn cell(record: &SuiteRecord, scenario: &str, previous: Option<&'static str>) -> Cell {
    let cases: Vec<_> = record
        .cases
        .iter()
        .filter(|c| c.scenario == scenario)
        .collect();
    if cases.is_empty() {
        return Cell {
            class: "absent",
            text: "—".to_owned(),
            flip: false,
            title: "not run that night".to_owned(),
            link: None,
        };
    }
    let count = |s: CaseStatus| cases.iter().filter(|c| c.status == s).count();
    let ran = cases.len() - count(CaseStatus::Skipped);
    let class = if count(CaseStatus::Mismatch) > 0 {
        "fail"
    } else if count(CaseStatus::Error) > 0 {
        "error"
    } else if ran == 0 {
        "skipped"
    } else {
        "pass"
    };
    let first_bad = cases
        .iter()
        .find(|c| c.status != CaseStatus::Passed && c.run.is_some())
        .or_else(|| cases.iter().find(|c| c.run.is_some()));
    let verdicts: Vec<String> = cases
        .iter()
        .map(|c| {
            format!(
                "seed {}: {}",
                c.seed,
                c.verdict.as_deref().unwrap_or(c.status.name())
            )
        })
        .collect();
    Cell {
        class,
        text: format!("{}/{}", count(CaseStatus::Passed), cases.len()),
        // A skipped night says nothing about the lock: it is not a flip either way.
        flip: class != "skipped" && previous.is_some_and(|p| p != class && p != "skipped"),
        title: verdicts.join(", "),
        link: first_bad.and_then(|c| c.run.as_ref().map(|r| format!("../../{r}/report.html"))),
    }
}

/// Writes the trend page of every suite record in `store` to `dir/index.html`.
pub fn write_suite_page(store: &Path, dir: &Path) -> Result<std::path::PathBuf, ReportError> {
    let (records, unreadable) = crate::suite_record::read_suite_history(store);
    let html = render_suite_page(&records, &unreadable)?;
    let path = dir.join("index.html");
    crate::atomic_write::write_atomic(&path, html.as_bytes())?;
    Ok(path)
}
