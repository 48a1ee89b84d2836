//! What using a library as its documentation says changes: each `-documented` row set beside
//! its trusting twin (the row of the same name without the suffix), column by column, from the
//! record's cells, so the page says which cells change and never a figure typed by hand.

use super::page::cell_text;
use super::record::MatrixRecord;
use std::fmt::Write as _;

/// The markdown section, or `None` when the record has no documented row.
pub fn disciplines_section(record: &MatrixRecord) -> Option<String> {
    let documented: Vec<_> = (record.rows.iter())
        .filter(|r| r.discipline.as_deref() == Some("documented"))
        .collect();
    if documented.is_empty() {
        return None;
    }
    let mut md = String::from(
        "\n## Trusting and documented\n\nEach row used as its library's documentation says (`documented`: its loss notices honoured, its token checked by the resource where it gives one) beside the row that trusts the library (`trusting`), on the same faults, seeds and sizes: the cells whose verdict differs.\n\n",
    );
    for doc in documented {
        let ran = (record.columns.iter())
            .filter_map(|c| record.cell(&doc.name, &c.name))
            .any(|c| c.status.class() != "notrun");
        if !ran {
            let _ = writeln!(
                md,
                "- **{}**: not run yet in this matrix (added to the matrix file after its runs).",
                doc.name
            );
            continue;
        }
        let Some(base) = doc.name.strip_suffix("-documented") else {
            let _ = writeln!(md, "- **{}**: no trusting row to compare.", doc.name);
            continue;
        };
        if !record.rows.iter().any(|r| r.name == base) {
            let _ = writeln!(
                md,
                "- **{}**: no trusting row (`{base}`) in this matrix: used only as documented.",
                doc.name
            );
            continue;
        }
        let mut changed = Vec::new();
        let mut same = 0;
        for c in &record.columns {
            let (Some(t), Some(d)) = (record.cell(base, &c.name), record.cell(&doc.name, &c.name))
            else {
                continue;
            };
            if t.status.class() == d.status.class() {
                same += 1;
            } else {
                changed.push(format!("{} {} → {}", c.name, cell_text(t), cell_text(d)));
            }
        }
        let rest = match (changed.is_empty(), same) {
            (true, _) => "no cell changes".to_owned(),
            (false, 0) => changed.join("; "),
            (false, n) => format!("{}; the other {n} the same", changed.join("; ")),
        };
        let _ = writeln!(md, "- **{}** → **{}**: {rest}.", base, doc.name);
    }
    Some(md)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::cell::{aggregate, CellHead};
    use crate::matrix::record::{ColumnInfo, RowInfo, RunSummary};

    fn row(name: &str, discipline: &str) -> RowInfo {
        RowInfo {
            name: name.into(),
            lock: "l".into(),
            server: "s".into(),
            client: "process".into(),
            fenced: false,
            ttl_ms: 1000,
            about: String::new(),
            library: None,
            server_version: None,
            discipline: Some(discipline.into()),
        }
    }

    fn cell(row: &str, column: &str, verdicts: &[&str]) -> crate::matrix::CellSummary {
        let head = CellHead {
            row: row.into(),
            column: column.into(),
            ..CellHead::default()
        };
        let runs = (verdicts.iter().enumerate())
            .map(|(i, v)| RunSummary {
                exposed_by: Some("exposed".into()),
                violations: u64::from(*v == "invalid"),
                ..RunSummary::checked(row, column, i as u64 + 1, v)
            })
            .collect();
        aggregate(head, runs)
    }

    #[test]
    fn a_documented_row_is_set_beside_its_trusting_twin_cell_by_cell() {
        let mut r = MatrixRecord::of_cells(vec![
            cell("kazoo", "pause", &["invalid", "invalid"]),
            cell("kazoo", "none", &["valid", "valid"]),
            cell("kazoo-documented", "pause", &["valid", "valid"]),
            cell("kazoo-documented", "none", &["valid", "valid"]),
            cell("fenced-documented", "none", &["valid"]),
            cell("new-documented", "none", &[]),
        ]);
        r.rows = vec![
            row("kazoo", "trusting"),
            row("kazoo-documented", "documented"),
            row("fenced-documented", "documented"),
            row("new-documented", "documented"),
        ];
        r.columns = ["pause", "none"]
            .map(|n| ColumnInfo {
                name: n.into(),
                about: String::new(),
            })
            .to_vec();
        let md = disciplines_section(&r).unwrap();
        assert!(
            md.contains("- **kazoo** → **kazoo-documented**: pause UNSAFE 2/2 15–100% → safe 0/2 ≤85%; the other 1 the same."),
            "{md}"
        );
        assert!(
            md.contains("- **fenced-documented**: no trusting row (`fenced`) in this matrix"),
            "{md}"
        );
        r.rows
            .retain(|r| r.discipline.as_deref() != Some("documented"));
        assert_eq!(disciplines_section(&r), None);
    }
}
