//! Two publications of a matrix set side by side (`lockpick matrix diff OLD NEW`): per cell
//! the two violation rates over the runs that could show one, Fisher's exact test of whether
//! they differ, and which cells moved beyond noise once every cell compared is accounted for
//! (Holm's correction: with 100 cells, about 5 would pass p < 0.05 by chance alone).

use super::cell::safety_counts;
use super::record::MatrixRecord;
use crate::stats::fisher_exact;

/// The family-wise error rate the moved cells are held to.
pub const ALPHA: f64 = 0.05;

/// One cell in both publications.
#[derive(Debug, Clone, PartialEq)]
pub struct CellDiff {
    pub row: String,
    pub column: String,
    /// Violations of the runs that could show one, before and after.
    pub old: (u64, u64),
    pub new: (u64, u64),
    /// The cells' labels (`safe 0/10 ≤31%`), before and after.
    pub old_label: String,
    pub new_label: String,
    /// Fisher's exact test, two-sided, and the same after Holm's correction over every cell
    /// compared.
    pub p: f64,
    pub p_holm: f64,
}

impl CellDiff {
    /// Whether the rates differ beyond noise (Holm-corrected p under [`ALPHA`]).
    pub fn moved(&self) -> bool {
        self.p_holm < ALPHA
    }
}

/// Why a cell was not compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum NotCompared {
    OnlyInNew,
    OnlyInOld,
    /// In both, but without a run that could show a violation in the old one (or the new).
    NoneExposedInOld,
    NoneExposedInNew,
}

impl NotCompared {
    pub fn why(self) -> &'static str {
        match self {
            NotCompared::OnlyInNew => "only in the new one",
            NotCompared::OnlyInOld => "only in the old one",
            NotCompared::NoneExposedInOld => "no run that could show a violation in the old one",
            NotCompared::NoneExposedInNew => "no run that could show a violation in the new one",
        }
    }
}

/// A cell of one or both publications that was not compared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmatched {
    pub row: String,
    pub column: String,
    pub why: NotCompared,
}

impl std::fmt::Display for Unmatched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} × {}: {}", self.row, self.column, self.why.why())
    }
}

/// What changed between two publications.
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixDiff {
    /// The cells in both, each with runs that count in both, in the new one's order.
    pub cells: Vec<CellDiff>,
    /// Cells in only one of them, or without a run that counts in one.
    pub unmatched: Vec<Unmatched>,
}

/// Compares the cells of `old` and `new`.
pub fn diff_matrices(old: &MatrixRecord, new: &MatrixRecord) -> MatrixDiff {
    let mut cells = Vec::new();
    let mut unmatched = Vec::new();
    let not = |row: &str, column: &str, why| Unmatched {
        row: row.to_owned(),
        column: column.to_owned(),
        why,
    };
    for n in &new.cells {
        let Some(o) = old.cell(&n.row, &n.column) else {
            unmatched.push(not(&n.row, &n.column, NotCompared::OnlyInNew));
            continue;
        };
        let (a, n1) = safety_counts(&o.runs);
        let (b, n2) = safety_counts(&n.runs);
        if n1 == 0 || n2 == 0 {
            let why = if n1 == 0 {
                NotCompared::NoneExposedInOld
            } else {
                NotCompared::NoneExposedInNew
            };
            unmatched.push(not(&n.row, &n.column, why));
            continue;
        }
        cells.push(CellDiff {
            row: n.row.clone(),
            column: n.column.clone(),
            old: (a, n1),
            new: (b, n2),
            old_label: super::page::cell_text(o),
            new_label: super::page::cell_text(n),
            p: fisher_exact(a, n1, b, n2),
            p_holm: 1.0,
        });
    }
    for o in &old.cells {
        if new.cell(&o.row, &o.column).is_none() {
            unmatched.push(not(&o.row, &o.column, NotCompared::OnlyInOld));
        }
    }
    holm(&mut cells);
    MatrixDiff { cells, unmatched }
}

/// Holm's step-down correction of each cell's p over all of them: the i-th smallest of m
/// is multiplied by m - i, never below the one before it, at most 1.
fn holm(cells: &mut [CellDiff]) {
    let m = cells.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| cells[i].p.total_cmp(&cells[j].p));
    let mut running = 0.0_f64;
    for (rank, &i) in order.iter().enumerate() {
        let adjusted = (cells[i].p * (m - rank) as f64).min(1.0);
        running = running.max(adjusted);
        cells[i].p_holm = running;
    }
}

/// The diff for people: the moved cells, then the cells whose counts changed within noise,
/// then those that could not be compared.
pub fn diff_text(d: &MatrixDiff, old_name: &str, new_name: &str) -> String {
    let mut out = format!(
        "{} cell(s) compared ({old_name} → {new_name}); moved beyond noise: Fisher's exact test, Holm-corrected over all {} at {:.0}%\n",
        d.cells.len(),
        d.cells.len(),
        ALPHA * 100.0
    );
    let line = |c: &CellDiff| {
        format!(
            "  {} × {}: {}/{} → {}/{} ({} → {}), p = {:.3}, corrected {:.3}\n",
            c.row,
            c.column,
            c.old.0,
            c.old.1,
            c.new.0,
            c.new.1,
            c.old_label,
            c.new_label,
            c.p,
            c.p_holm
        )
    };
    let moved: Vec<&CellDiff> = d.cells.iter().filter(|c| c.moved()).collect();
    out.push_str(&format!("moved: {}\n", moved.len()));
    for c in &moved {
        out.push_str(&line(c));
    }
    let changed: Vec<&CellDiff> = (d.cells.iter())
        .filter(|c| !c.moved() && (c.old.0 * c.new.1 != c.new.0 * c.old.1))
        .collect();
    out.push_str(&format!("changed within noise: {}\n", changed.len()));
    for c in &changed {
        out.push_str(&line(c));
    }
    if !d.unmatched.is_empty() {
        out.push_str(&format!("not compared: {}\n", d.unmatched.len()));
        for u in &d.unmatched {
            out.push_str(&format!("  {u}\n"));
        }
    }
    out
}

/// The section a published page gives to what changed since the page it replaces: the cells
/// that moved beyond noise, with their p-values, and those whose counts changed within it.
pub fn since_section(old: &MatrixRecord, new: &MatrixRecord) -> String {
    let d = diff_matrices(old, new);
    let mut md = format!(
        "\n## Since the last publication\n\nAgainst the page it replaces (runs started {}): {} cell(s) compared with Fisher's exact test, Holm-corrected over all of them at {:.0}%.\n\n",
        old.started,
        d.cells.len(),
        ALPHA * 100.0
    );
    let line = |c: &CellDiff| {
        format!(
            "- {} × {}: {} → {} (p = {:.3}, corrected {:.3})\n",
            c.row, c.column, c.old_label, c.new_label, c.p, c.p_holm
        )
    };
    let moved: Vec<&CellDiff> = d.cells.iter().filter(|c| c.moved()).collect();
    match moved.len() {
        0 => md.push_str("No cell moved beyond noise.\n"),
        n => {
            md.push_str(&format!("**Moved beyond noise ({n}):**\n\n"));
            moved.iter().for_each(|c| md.push_str(&line(c)));
        }
    }
    let changed: Vec<&CellDiff> = (d.cells.iter())
        .filter(|c| !c.moved() && (c.old.0 * c.new.1 != c.new.0 * c.old.1))
        .collect();
    if !changed.is_empty() {
        md.push_str(&format!("\nChanged within noise ({}):\n\n", changed.len()));
        changed.iter().for_each(|c| md.push_str(&line(c)));
    }
    if !d.unmatched.is_empty() {
        // One line per reason: a page's reader wants to know which cells, not to read the
        // reason ninety times.
        md.push_str(&format!("\nNot compared ({}):\n\n", d.unmatched.len()));
        let mut by_why: std::collections::BTreeMap<NotCompared, Vec<String>> = Default::default();
        for u in &d.unmatched {
            (by_why.entry(u.why).or_default()).push(format!("{} × {}", u.row, u.column));
        }
        for (why, cells) in by_why {
            md.push_str(&format!(
                "- {} ({}): {}\n",
                why.why(),
                cells.len(),
                cells.join(", ")
            ));
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::{aggregate, CellHead, RunSummary};

    fn run(row: &str, column: &str, seed: u64, verdict: &str) -> RunSummary {
        RunSummary::checked(row, column, seed, verdict)
    }

    /// A record of cells `(row, column, violations, runs)`.
    fn record(cells: &[(&str, &str, u64, u64)]) -> MatrixRecord {
        let cells = cells
            .iter()
            .map(|&(row, column, k, n)| {
                let runs = (0..n)
                    .map(|s| run(row, column, s, if s < k { "invalid" } else { "valid" }))
                    .collect();
                let head = CellHead {
                    row: row.into(),
                    column: column.into(),
                    expected: "valid".into(),
                    ..CellHead::default()
                };
                aggregate(head, runs)
            })
            .collect();
        MatrixRecord::of_cells(cells)
    }

    #[test]
    fn a_published_page_names_the_cells_that_moved_since_the_page_it_replaces() {
        let mut old = record(&[("redis", "pause", 0, 10), ("pg", "crash", 2, 10)]);
        old.started = "20261120T000000Z".into();
        let new = record(&[("redis", "pause", 10, 10), ("pg", "crash", 3, 10)]);
        let md = since_section(&old, &new);
        assert!(md.contains("## Since the last publication"), "{md}");
        assert!(md.contains("runs started 20261120T000000Z"), "{md}");
        assert!(
            md.contains("**Moved beyond noise (1):**\n\n- redis × pause: safe 0/10 ≤31% → UNSAFE 10/10 69–100% (p = 0.000"),
            "{md}"
        );
        assert!(
            md.contains("Changed within noise (1):\n\n- pg × crash: UNSAFE 2/10"),
            "{md}"
        );
        let same = since_section(&new, &new);
        assert!(same.contains("No cell moved beyond noise."), "{same}");
    }

    #[test]
    fn the_cells_not_compared_are_listed_once_per_reason() {
        let mut old = record(&[("a", "x", 0, 0), ("b", "x", 0, 0), ("c", "x", 1, 3)]);
        old.started = "20261120T000000Z".into();
        let new = record(&[("a", "x", 0, 3), ("b", "x", 1, 3), ("d", "x", 0, 3)]);
        let md = since_section(&old, &new);
        assert!(
            md.contains("Not compared (4):\n\n- only in the new one (1): d × x\n- only in the old one (1): c × x\n- no run that could show a violation in the old one (2): a × x, b × x\n"),
            "{md}"
        );
    }

    #[test]
    fn a_cell_that_went_from_none_to_all_moved_and_one_more_violation_did_not() {
        let old = record(&[
            ("pg", "crash", 2, 10),
            ("redis", "pause", 0, 10),
            ("zk", "cut", 0, 10),
            ("gone", "x", 0, 3),
        ]);
        let new = record(&[
            ("pg", "crash", 3, 10),
            ("redis", "pause", 10, 10),
            ("zk", "cut", 0, 10),
            ("added", "x", 0, 3),
        ]);
        let d = diff_matrices(&old, &new);
        assert_eq!(d.cells.len(), 3);
        let cell = |row: &str| d.cells.iter().find(|c| c.row == row).unwrap();
        let redis = cell("redis");
        assert!(redis.moved(), "{redis:?}");
        assert!(redis.p < 1.1e-5 && redis.p_holm < 3.3e-5, "{redis:?}");
        let pg = cell("pg");
        assert!(!pg.moved() && pg.p > 0.5, "{pg:?}");
        assert_eq!(cell("zk").p, 1.0);
        assert_eq!(d.unmatched.len(), 2, "{:?}", d.unmatched);
        let text = diff_text(&d, "old", "new");
        assert!(
            text.contains("moved: 1\n  redis × pause: 0/10 → 10/10"),
            "{text}"
        );
        assert!(
            text.contains("changed within noise: 1\n  pg × crash: 2/10 → 3/10"),
            "{text}"
        );
        assert!(text.contains("added × x: only in the new one"), "{text}");
        assert!(text.contains("gone × x: only in the old one"), "{text}");
        assert_eq!(
            super::super::page::cell_text(&new.cells[1]),
            "UNSAFE 10/10 69–100%"
        );
    }

    #[test]
    fn holm_multiplies_the_smallest_by_the_count_and_never_lowers_a_later_one() {
        let mut cells: Vec<CellDiff> = [0.01, 0.04, 0.03, 0.5]
            .iter()
            .map(|&p| CellDiff {
                row: String::new(),
                column: String::new(),
                old: (0, 1),
                new: (0, 1),
                old_label: String::new(),
                new_label: String::new(),
                p,
                p_holm: 1.0,
            })
            .collect();
        holm(&mut cells);
        let adjusted: Vec<f64> = cells.iter().map(|c| c.p_holm).collect();
        // 0.01 × 4, 0.03 × 3, 0.04 × 2 (raised to 0.09), 0.5 × 1.
        assert!((adjusted[0] - 0.04).abs() < 1e-12);
        assert!((adjusted[2] - 0.09).abs() < 1e-12);
        assert!((adjusted[1] - 0.09).abs() < 1e-12);
        assert!((adjusted[3] - 0.5).abs() < 1e-12);
    }
}
