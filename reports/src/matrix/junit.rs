//! A matrix as a JUnit XML report, for the CI pages that read it: one `<testsuite>` per row,
//! one `<testcase>` per cell. A cell that disagrees with its expectation is a `<failure>`; a
//! cell that says nothing (not exposed, n/a, not injectable here, not tested, not run) is
//! `<skipped>` with why; a cell whose runs could not be made is an `<error>`. Each row's
//! properties carry every cell's figures as the page shows them (`safe 0/10 ≤31%`) and in a
//! sentence, so the JUnit file, matrix.json and the markdown say the same.

use super::page::{cell_label, cell_sentence};
use super::record::{CellStatus, CellSummary, MatrixRecord};
use crate::junit::{attr, iso_timestamp, text_node};
use std::fmt::Write as _;

/// The JUnit XML of `record`.
pub fn matrix_junit(record: &MatrixRecord) -> String {
    let count = |cells: &[&CellSummary], k: Kind| cells.iter().filter(|c| kind(c) == k).count();
    let all: Vec<&CellSummary> = record.cells.iter().collect();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"lockpick matrix {}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3}\">",
        attr(&record.name),
        all.len(),
        count(&all, Kind::Failure),
        count(&all, Kind::Error),
        count(&all, Kind::Skipped),
        all.iter().map(|c| secs(c)).sum::<f64>()
    );
    let timestamp = iso_timestamp(&record.started);
    for (id, row) in record.rows.iter().enumerate() {
        let cells: Vec<&CellSummary> = (record.cells.iter())
            .filter(|c| c.row == row.name)
            .collect();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" package=\"lockpick.matrix\" id=\"{id}\" timestamp=\"{timestamp}\" hostname=\"localhost\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3}\">",
            attr(&row.name),
            cells.len(),
            count(&cells, Kind::Failure),
            count(&cells, Kind::Error),
            count(&cells, Kind::Skipped),
            cells.iter().map(|c| secs(c)).sum::<f64>()
        );
        out.push_str("    <properties>\n");
        let mut property = |name: &str, value: &str| {
            let _ = writeln!(
                out,
                "      <property name=\"{}\" value=\"{}\"/>",
                attr(name),
                attr(value)
            );
        };
        property("lock", &row.lock);
        property("lockpick-version", &record.lockpick_version);
        property("command", &record.command);
        for c in &cells {
            property(&format!("cell.{}", c.column), &cell_label(c));
            property(&format!("cell.{}.sentence", c.column), &cell_sentence(c));
            property(&format!("cell.{}.expected", c.column), &c.expected);
        }
        out.push_str("    </properties>\n");
        for c in &cells {
            testcase(&mut out, record, c);
        }
        out.push_str("    <system-out></system-out>\n    <system-err></system-err>\n");
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Passed,
    Failure,
    Error,
    Skipped,
}

/// What a cell is to JUnit: a disagreement fails; a cell that says nothing is skipped.
fn kind(c: &CellSummary) -> Kind {
    if c.mismatch {
        return Kind::Failure;
    }
    match &c.status {
        CellStatus::Safe { .. }
        | CellStatus::Unsafe { .. }
        | CellStatus::UnsafeExplored { .. }
        | CellStatus::Stuck { .. } => Kind::Passed,
        CellStatus::Unknown(_) if c.runs.iter().any(|r| r.error.is_some()) => Kind::Error,
        CellStatus::Unknown(_)
        | CellStatus::NotApplicable(_)
        | CellStatus::NotInjectable(_)
        | CellStatus::Untestable(_)
        | CellStatus::NotRun
        | CellStatus::NotExposed(_) => Kind::Skipped,
    }
}

fn secs(c: &CellSummary) -> f64 {
    c.runs.iter().map(|r| r.secs).sum()
}

fn testcase(out: &mut String, record: &MatrixRecord, c: &CellSummary) {
    let _ = write!(
        out,
        "    <testcase name=\"{}\" classname=\"lockpick.matrix.{}.{}\" time=\"{:.3}\"",
        attr(&c.column),
        attr(&record.name),
        attr(&c.row),
        secs(c)
    );
    let message = format!("{}: {}", cell_label(c), cell_sentence(c));
    let repeat = (c.runs.iter())
        .find(|r| r.verdict.as_deref() == Some("invalid"))
        .or(c.runs.first())
        .map_or(String::new(), |r| format!("\nreproduce: {}", r.reproduce));
    match kind(c) {
        Kind::Passed => out.push_str("/>\n"),
        Kind::Failure | Kind::Error => {
            let (what, kind) = match kind(c) {
                Kind::Error => ("error", "harness-error"),
                Kind::Passed | Kind::Failure | Kind::Skipped => ("failure", "expectation-mismatch"),
            };
            let text = format!(
                "{message}\nexpected {}: {}{repeat}",
                c.expected, c.expected_why
            );
            let _ = write!(
                out,
                ">\n      <{what} message=\"{}\" type=\"{kind}\">{}</{what}>\n    </testcase>\n",
                attr(&message),
                text_node(&text)
            );
        }
        Kind::Skipped => {
            let _ = write!(
                out,
                ">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                attr(&message)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::{aggregate, CellHead, RowInfo, RunSummary};

    fn run(seed: u64, verdict: &str, not_exposed: Option<&str>) -> RunSummary {
        let mut r = crate::matrix::note_render::tests::run(seed, verdict);
        r.not_exposed = not_exposed.map(Into::into);
        r
    }

    #[test]
    fn cells_are_testcases_with_their_figures_as_the_page_shows_them() {
        let head = |column: &str, expected: &str| CellHead {
            row: "redis".into(),
            column: column.into(),
            expected: expected.into(),
            ..CellHead::default()
        };
        let safe = aggregate(
            head("pause", "valid"),
            (1..=10).map(|s| run(s, "valid", None)).collect(),
        );
        let wrong = aggregate(head("crash", "valid"), vec![run(1, "invalid", None)]);
        let idle = aggregate(
            head("latency", "valid"),
            vec![run(1, "not-exposed", Some("no grant came back late"))],
        );
        let mut record = MatrixRecord::of_cells(vec![safe, wrong, idle]);
        record.rows = vec![RowInfo {
            name: "redis".into(),
            lock: "redis".into(),
            server: "redis".into(),
            client: "redis-lock".into(),
            fenced: false,
            ttl_ms: 1000,
            about: String::new(),
            library: None,
            server_version: None,
            discipline: None,
        }];
        let xml = matrix_junit(&record);
        assert!(
            xml.contains(r#"tests="3" failures="1" errors="0" skipped="1""#),
            "{xml}"
        );
        assert!(
            xml.contains(r#"<property name="cell.pause" value="safe 0/10 ≤31%"/>"#),
            "{xml}"
        );
        assert!(
            xml.contains("a violation in more than 31% of exposed runs would have shown here"),
            "{xml}"
        );
        assert!(xml.contains(r#"<testcase name="pause" classname="lockpick.matrix.m.redis""#));
        assert!(xml.contains(r#"type="expectation-mismatch""#), "{xml}");
        assert!(
            xml.contains(
                r#"<skipped message="not exposed: not exposed: no grant came back late"/>"#
            ),
            "{xml}"
        );
    }
}
