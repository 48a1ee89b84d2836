//! A run's `history.html`: its history as a table, one row per line, each with an anchor
//! (`#h-N`) that the report's timeline links every hold, write and fault to, so that a click on
//! the chart shows the line it was drawn from, with no JavaScript. Long histories stop at
//! [`MAX_ROWS`] rows (the rest is in `history.jsonl`, which the page links).

use crate::error::ReportError;
use crate::html::escape;
use lockpick_checker::history::Event;
use lockpick_checker::results::RunResults;
use std::fmt::Write as _;
use std::path::Path;

/// The page's file name in a run folder.
pub const HISTORY_PAGE: &str = "history.html";

/// The most rows a page has: about 10 MB of HTML, which a browser still opens at once.
pub const MAX_ROWS: u64 = 50_000;

/// The page, built as the history is read.
pub struct HistoryPage {
    html: String,
    rows: u64,
    /// The last index with a row.
    last: Option<u64>,
    /// Lines past [`MAX_ROWS`].
    left_out: u64,
}

impl HistoryPage {
    /// The page of `results`'s run.
    pub fn of(results: &RunResults) -> HistoryPage {
        let title = format!(
            "History of {} on {}, seed {}",
            results.scenario, results.backend, results.seed
        );
        HistoryPage::new(&title, &results.history)
    }

    /// A page headed `title` for the history file `file` (relative to the run folder).
    pub fn new(title: &str, file: &str) -> HistoryPage {
        let mut html = String::new();
        let _ = write!(
            html,
            r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{t}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 1em; }}
table {{ border-collapse: collapse; font-size: 13px; }}
td, th {{ padding: 1px 8px; border-bottom: 1px solid #eee; text-align: left; vertical-align: top; }}
td.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
td.line {{ font-family: ui-monospace, monospace; word-break: break-all; }}
tr.nemesis {{ background: #fdf3e7; }}
tr:target {{ background: #fff176; outline: 2px solid #f9a825; }}
</style></head><body>
<h1>{t}</h1>
<p><a href="report.html">the report</a> · the file itself: <a href="{file}">{file}</a> · a row's anchor is <code>#h-</code> and its index</p>
<table><thead><tr><th>#</th><th>time</th><th>process</th><th>type</th><th>f</th><th>the line's other fields</th></tr></thead><tbody>
"#,
            t = escape(title),
            file = escape(file),
        );
        HistoryPage {
            html,
            rows: 0,
            last: None,
            left_out: 0,
        }
    }

    /// Adds `e`'s row (or counts it, past [`MAX_ROWS`]).
    pub fn push(&mut self, e: &Event) {
        if self.rows >= MAX_ROWS {
            self.left_out += 1;
            return;
        }
        self.rows += 1;
        self.last = Some(e.index);
        let nemesis = matches!(e.process, lockpick_checker::history::Process::Nemesis);
        let mut rest = serde_json::Map::new();
        if let Some(lock) = &e.lock {
            rest.insert("lock".into(), lock.clone().into());
        }
        if !e.value.is_empty() {
            if let Ok(v) = serde_json::to_value(&e.value) {
                rest.insert("value".into(), v);
            }
        }
        if let Some(error) = &e.error {
            rest.insert("error".into(), error.clone().into());
        }
        let rest = serde_json::Value::Object(rest).to_string();
        let _ = writeln!(
            self.html,
            r##"<tr id="h-{i}"{class}><td class="num"><a href="#h-{i}">{i}</a></td><td class="num">{t:.6} s</td><td>{p}</td><td>{k}</td><td>{f}</td><td class="line">{rest}</td></tr>"##,
            i = e.index,
            class = if nemesis { r#" class="nemesis""# } else { "" },
            t = e.time_ns as f64 / 1e9,
            p = escape(&e.process.to_string()),
            k = escape(&format!("{:?}", e.kind).to_lowercase()),
            f = escape(&e.f.to_string()),
            rest = escape(&rest),
        );
    }

    /// The last history index the page has a row for.
    pub fn last_index(&self) -> Option<u64> {
        self.last
    }

    /// Writes the page into the run folder `dir`.
    pub fn write(mut self, dir: &Path) -> Result<(), ReportError> {
        self.html.push_str("</tbody></table>\n");
        if self.left_out > 0 {
            let _ = writeln!(
                self.html,
                "<p>{} more lines are in the history file: this page stops at {MAX_ROWS} rows.</p>",
                self.left_out
            );
        }
        self.html.push_str("</body></html>\n");
        crate::atomic_write::write_atomic(&dir.join(HISTORY_PAGE), self.html.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockpick_checker::history::{EventKind, Process, Value, F};

    fn event(index: u64, process: Process, f: F, error: Option<&str>) -> Event {
        Event {
            v: 1,
            index,
            time_ns: index * 1_000_000,
            process,
            kind: EventKind::Invoke,
            f,
            lock: Some("lock".into()),
            value: Value::default(),
            error: error.map(str::to_owned),
        }
    }

    #[test]
    fn every_line_is_a_row_with_its_anchor_and_the_text_is_escaped() {
        let mut page = HistoryPage::new("History of s <1>", "history.jsonl");
        page.push(&event(0, Process::Client(2), F::Acquire, None));
        page.push(&event(1, Process::Nemesis, F::Pause, Some("<gone> & back")));
        assert_eq!(page.last_index(), Some(1));
        let dir = tempfile::tempdir().unwrap();
        page.write(dir.path()).unwrap();
        let html = std::fs::read_to_string(dir.path().join(HISTORY_PAGE)).unwrap();
        assert!(
            html.contains(r##"<tr id="h-0"><td class="num"><a href="#h-0">0</a>"##),
            "{html}"
        );
        assert!(html.contains(r#"<tr id="h-1" class="nemesis">"#), "{html}");
        assert!(html.contains("&lt;gone&gt; &amp; back"), "{html}");
        assert!(!html.contains("<gone>"), "{html}");
        assert!(html.contains("<h1>History of s &lt;1&gt;</h1>"), "{html}");
        assert!(html.ends_with("</body></html>\n"));
    }
}
