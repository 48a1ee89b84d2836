//! The page of one `lockpick explore`: what was tried (a chart of fault kind × size, one dot
//! per fault of each run, coloured by what the run found), the violation found, the shrink
//! steps with their reproduction rates, and the shrunk scenario. Read from the exploration's
//! `explore.json`; the reports do not depend on the harness, so the fields read are declared
//! here, and fields the page does not show are ignored.

mod chart;

use crate::error::ReportError;
use crate::templates::render;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where explorations are stored, under the store.
pub const EXPLORE_DIR: &str = "explore";

/// One fault of a schedule, as `explore.json` holds it.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Fault {
    pub fault: String,
    pub at_ms: u64,
    pub size_ms: u64,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Schedule {
    pub faults: Vec<Fault>,
    pub clients: usize,
    pub duration_ms: u64,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Try {
    pub n: usize,
    pub phase: String,
    pub seed: u64,
    pub schedule: Schedule,
    pub file: PathBuf,
    pub run: Option<PathBuf>,
    pub verdict: Option<String>,
    pub found: String,
    pub finding: Option<String>,
    pub error: Option<String>,
    pub at_s: f64,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct ShrinkStep {
    pub change: String,
    pub hits: u32,
    pub runs: u32,
    pub kept: bool,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Shrunk {
    pub file: PathBuf,
    pub schedule: Schedule,
    pub hits: u32,
    pub runs: u32,
    pub seed: u64,
    pub command: String,
    pub removed: Vec<String>,
    /// Whether the find reproduced reliably enough to be shrunk.
    #[serde(default)]
    pub shrunk: bool,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct LeftOut {
    pub fault: String,
    pub reason: String,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Need {
    pub k: u32,
    pub n: u32,
}

/// `explore.json`, the fields this page shows.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Exploration {
    pub id: String,
    pub base: String,
    pub base_file: PathBuf,
    pub seed: u64,
    pub budget_s: f64,
    pub shrink_budget_s: f64,
    pub need: Need,
    pub lease_ms: u64,
    pub faults: Vec<String>,
    pub left_out: Vec<LeftOut>,
    pub tries: Vec<Try>,
    pub found: Option<usize>,
    pub found_class: String,
    pub found_about: String,
    pub shrink: Vec<ShrinkStep>,
    pub shrunk: Option<Shrunk>,
    pub stopped: String,
    pub elapsed_s: f64,
    pub done: bool,
}

/// Reads `dir/explore.json`.
pub fn read_exploration(dir: &Path) -> Result<Exploration, ReportError> {
    let path = dir.join("explore.json");
    let text = std::fs::read_to_string(&path).map_err(|source| ReportError::Read {
        path: path.clone(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| ReportError::Parse {
        path,
        message: e.to_string(),
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
    ex: &'a Exploration,
    chart: String,
    searched: usize,
    faults_tried: usize,
    rows: Vec<Row<'a>>,
    found: Option<Row<'a>>,
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
    Row {
        t,
        url: t.run.as_deref().and_then(|r| url(store, r)),
        faults: if faults.is_empty() {
            "no fault".into()
        } else {
            faults.join(" + ")
        },
    }
}

/// Renders the page of `ex`; `store` is the store root its runs are under (for links).
pub fn render_explore_page(ex: &Exploration, store: &Path) -> Result<String, ReportError> {
    let search: Vec<&Try> = ex.tries.iter().filter(|t| t.phase == "search").collect();
    let page = Page {
        ex,
        chart: chart::svg(&search, &ex.faults, ex.lease_ms),
        searched: search.len(),
        faults_tried: search.iter().map(|t| t.schedule.faults.len()).sum(),
        rows: ex.tries.iter().map(|t| row(store, t)).collect(),
        found: ex
            .found
            .and_then(|n| ex.tries.get(n.wrapping_sub(1)))
            .map(|t| row(store, t)),
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
