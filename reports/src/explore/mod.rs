//! The page of one `lockpick explore`: what was tried (a chart of fault kind × size, one dot
//! per fault of each run, coloured by what the run found), the violation found, the shrink
//! steps with their reproduction rates, and the shrunk scenario. Read from the exploration's
//! `explore.json`, whose one definition is the store's (`lockpick_store::explore`): the
//! reports do not depend on the harness.

mod chart;

use crate::error::ReportError;
use crate::templates::render;
use serde::Serialize;
use std::path::{Path, PathBuf};

pub use lockpick_store::explore::EXPLORE_DIR;
use lockpick_store::explore::{read_explore_record, ExploreRecord, Phase, ReadRecordError, Try};

/// Reads `dir/explore.json`: the store's record, which the harness writes.
pub fn read_exploration(dir: &Path) -> Result<ExploreRecord, ReportError> {
    read_explore_record(dir).map_err(|e| match e {
        ReadRecordError::Read { path, source } => ReportError::Read { path, source },
        ReadRecordError::Parse { path, message } => ReportError::Parse { path, message },
    })
}

/// A run as the page links it: a URL path from the store's root when the run is in `store`.
#[derive(Debug, Serialize)]
struct Row<'a> {
    t: &'a Try,
    url: Option<String>,
    faults: String,
}

#[derive(Debug, Serialize)]
struct Page<'a> {
    ex: &'a ExploreRecord,
    chart: String,
    searched: usize,
    faults_tried: usize,
    rows: Vec<Row<'a>>,
    found: Option<Row<'a>>,
    /// The command that repeats the run that found the violation (its results.json's), shown
    /// as soon as the find is recorded: shrinking may take long, or never end.
    found_repeat: Option<String>,
    shrunk_text: Option<String>,
}

/// The URL path of `run` from `store`'s root, if it is under it.
fn url(store: &Path, run: &Path) -> Option<String> {
    let rel = run.strip_prefix(store).ok()?;
    Some(format!("/{}", rel.display()))
}

fn row<'a>(store: &Path, t: &'a Try) -> Row<'a> {
    let faults: Vec<String> = t
        .schedule
        .faults
        .iter()
        .map(|f| {
            if f.size_ms == 0 {
                format!("{} at {} ms", f.fault, f.at_ms)
            } else {
                format!("{} {} ms at {} ms", f.fault, f.size_ms, f.at_ms)
            }
        })
        .collect();
    let mut faults = if faults.is_empty() {
        "no fault".to_owned()
    } else {
        faults.join(" + ")
    };
    if let Some(w) = &t.schedule.workload {
        faults.push_str(&format!(
            "; {}, {} clients",
            w.describe(),
            t.schedule.clients
        ));
    }
    Row {
        t,
        url: t.run.as_deref().and_then(|r| url(store, r)),
        faults,
    }
}

/// Renders the page of `ex`; `store` is the store root its runs are under (for links).
pub fn render_explore_page(ex: &ExploreRecord, store: &Path) -> Result<String, ReportError> {
    let search: Vec<&Try> = ex
        .tries
        .iter()
        .filter(|t| t.phase == Phase::Search)
        .collect();
    let found = ex.found.and_then(|n| ex.tries.get(n.wrapping_sub(1)));
    let page = Page {
        ex,
        chart: chart::svg(&search, &ex.faults, ex.lease_ms),
        searched: search.len(),
        faults_tried: search.iter().map(|t| t.schedule.faults.len()).sum(),
        rows: ex.tries.iter().map(|t| row(store, t)).collect(),
        found: found.map(|t| row(store, t)),
        found_repeat: found
            .and_then(|t| t.run.as_deref())
            .and_then(|run| crate::run_report::read_results(run).ok())
            .map(|r| r.reproduce),
        shrunk_text: ex
            .shrunk
            .as_ref()
            .and_then(|s| std::fs::read_to_string(&s.file).ok()),
    };
    render("explore.html", &page)
}

/// Writes `dir/explore.html` from `dir/explore.json`; `dir` is `<store>/explore/<id>`.
pub fn write_explore_page(dir: &Path) -> Result<PathBuf, ReportError> {
    let ex = read_exploration(dir)?;
    // The store is two levels up: `<store>/explore/<id>`.
    let store = dir
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("."));
    let html = render_explore_page(&ex, store)?;
    let path = dir.join("explore.html");
    crate::atomic_write::write_atomic(&path, html.as_bytes())?;
    Ok(path)
}

/// The explorations under `store` that have a page, newest first, as URL paths.
pub fn list_explorations(store: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(store.join(EXPLORE_DIR))
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.path().join("explore.html").is_file())
                .map(|e| format!("{EXPLORE_DIR}/{}", e.file_name().to_string_lossy()))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out.reverse();
    out
}

#[cfg(test)]
mod tests;
