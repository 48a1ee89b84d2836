//! The matrix as a markdown document (`--markdown FILE`, e.g. `docs/safety-matrix.md`): the
//! date, the command, the versions of every server, the table, and every cell's expectation
//! with the cells that disagree or were not tested explained. Written to read on a code host:
//! each cell on one line, UNSAFE and STUCK marked, each cell a link to its sentence and note,
//! and no path of the machine that made it.

use super::note_render::{rendered_note, stale_notes, StaleNotes};
use super::page::{cell_label, cell_numbers, cell_sentence};
use super::record::{percent_up, CellStatus, CellSummary, MatrixRecord, RunSummary};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Where the record a markdown page was made from is written beside it
/// (`docs/library-matrix.md` → `docs/library-matrix.matrix.json`): committed with the page, it
/// is what the shipped notes are checked against and what the page can be made again from.
pub fn record_beside(markdown: &Path) -> PathBuf {
    markdown.with_extension("matrix.json")
}

/// The markdown text of `record`; `again` is the command that makes the whole matrix (and this
/// file) again from nothing. Refused, naming every one, when a cell's note disagrees with the
/// cell's runs: this is the page people quote, so a note it prints must be true of the runs
/// it shows (the live `matrix.html` marks such a note instead, see `page.rs`).
pub fn matrix_markdown(record: &MatrixRecord, again: &str) -> Result<String, StaleNotes> {
    let stale = stale_notes(record);
    if !stale.is_empty() {
        return Err(StaleNotes(stale));
    }
    let mut md = String::new();
    let _ = writeln!(md, "# Safety matrix `{}`\n", record.name);
    let _ = writeln!(
        md,
        "Generated from the runs of `store/matrix/{}/`, made by lockpick {} (started {}, last updated {}). Do not edit by hand: run the command below again.\n",
        record.started, record.lockpick_version, record.started, record.updated
    );
    if !record.description.is_empty() {
        let _ = writeln!(md, "{}\n", record.description);
    }
    let _ = writeln!(
        md,
        "To make it again from nothing:\n\n```\n{again}\n```\n\nThe last command run on it: `{}`.\n",
        without_machine_paths(&record.command)
    );
    let _ = writeln!(
        md,
        "Servers (the Debian packages, and the releases scripts/setup builds):"
    );
    for (k, v) in &record.server_versions {
        let _ = writeln!(md, "- {k} {v}");
    }
    md.push_str(&completeness(record));
    if let Some(stalls) = stall_sentence(record) {
        let _ = writeln!(md, "\n{stalls}");
    }
    if let Some(source) = &record.expectations {
        let _ = writeln!(md, "\n{} A cell that disagrees with its expectation is marked ≠; an expectation changed after the runs is a commit of its own that says why.", source.sentence());
    }
    if let Some(rechecked) = super::recheck_sentence(record) {
        let _ = writeln!(md, "\n**Checked again:** {rechecked}");
    }
    let _ = writeln!(
        md,
        "\n{} seed(s) per cell. `UNSAFE k/N`: a safety violation (double holder, stale write, lost update, non-linearizable history) in k of N runs. `STUCK k/N`: no safety violation, but a deadlock or a lockout (liveness: clients kept asking and nobody got the lock, or only one process did) in k of N runs. `safe 0/N`: no violation in the N runs that a fault exposed (one of its instances opened a window in which a violation was possible: docs/exposure.md); `k not exposed` counts the runs apart. `not exposed`: no run was (it says nothing either way). `not tested`: the row's setup cannot bring this fault to the lock (the matrix file says why). `n/a`: the lock cannot meet the fault. `not injectable here`: the lock could meet it, but lockpick cannot bring it to these servers on this machine (it says nothing about the lock). `+explore`: `--explore-safe` also searched other sizes and timings of the column's fault and found nothing; `UNSAFE (explore)`: safe at the fixed sizes, but that search found a schedule of the column's fault that breaks the lock and reproduces (the cell says which, and the command that repeats it). ≠ marks a cell that disagrees with its expected verdict. 🔴 marks UNSAFE, 🟠 STUCK; each cell links to its sentence and note below.\n",
        record.seeds
    );
    let _ = write!(md, "| lock |");
    for c in &record.columns {
        let _ = write!(md, " {} |", c.name);
    }
    let _ = write!(md, "\n|---|");
    for _ in &record.columns {
        let _ = write!(md, "---|");
    }
    md.push('\n');
    for r in &record.rows {
        let marks: Vec<&str> = [&r.library, &r.server_version]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect();
        if marks.is_empty() {
            let _ = write!(md, "| **{}** |", r.name);
        } else {
            let _ = write!(md, "| **{}** ({}) |", r.name, marks.join(", "));
        }
        for c in &record.columns {
            let text = record
                .cell(&r.name, &c.name)
                .map_or("—".to_owned(), md_cell);
            let _ = write!(md, " {text} |");
        }
        md.push('\n');
    }
    if let Some(section) = super::disciplines_section(record) {
        md.push_str(&section);
    }
    let _ = writeln!(md, "\n## The faults\n");
    for c in &record.columns {
        let _ = writeln!(md, "- **{}**: {}", c.name, c.about);
    }
    let _ = writeln!(md, "\n## The locks\n");
    for r in &record.rows {
        let _ = writeln!(
            md,
            "- **{}** ({}{} on {}, lease {} ms, {} resource): {}",
            r.name,
            r.client,
            r.library
                .as_ref()
                .map_or(String::new(), |l| format!(" running {l}")),
            r.server_version.as_ref().unwrap_or(&r.server),
            r.ttl_ms,
            if r.fenced { "fenced" } else { "naive" },
            r.about
        );
    }
    let _ = writeln!(md, "\n## Every cell\n");
    for c in &record.cells {
        let _ = writeln!(
            md,
            "- <a id=\"{}\"></a>**{} × {}**: {}{}. Expected {}: {}. {}{}",
            cell_anchor(&c.row, &c.column),
            c.row,
            c.column,
            cell_sentence(c),
            if c.mismatch {
                " — **disagrees with the expectation**"
            } else {
                ""
            },
            c.expected,
            c.expected_why,
            match c.status {
                CellStatus::NotApplicable(_)
                | CellStatus::NotInjectable(_)
                | CellStatus::Untestable(_)
                | CellStatus::NotRun => String::new(),
                _ => cell_numbers(c),
            },
            match rendered_note(c, record) {
                Some(Ok(n)) => format!(" *Note:* {n}"),
                // Refused above; none is left.
                Some(Err(_)) | None => String::new(),
            }
        );
    }
    Ok(md)
}

/// A table cell: its label on one line (no space a narrow column could break at), UNSAFE and
/// STUCK in bold with a marker, linked to the cell's sentence and note.
fn md_cell(c: &CellSummary) -> String {
    let label = cell_label(c).replace(' ', "&nbsp;");
    let shown = match c.status {
        CellStatus::Unsafe { .. } | CellStatus::UnsafeExplored { .. } => {
            format!("**🔴&nbsp;{label}**")
        }
        CellStatus::Stuck { .. } => format!("**🟠&nbsp;{label}**"),
        CellStatus::NotApplicable(_)
        | CellStatus::NotInjectable(_)
        | CellStatus::NotRun
        | CellStatus::Untestable(_)
        | CellStatus::NotExposed(_)
        | CellStatus::Safe { .. }
        | CellStatus::Unknown(_) => label,
    };
    format!("[{shown}](#{})", cell_anchor(&c.row, &c.column))
}

/// The anchor of a cell's line in "Every cell": `cell-redis--client-pause`.
fn cell_anchor(row: &str, column: &str) -> String {
    let slug = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect()
    };
    format!("cell-{}--{}", slug(row), slug(column))
}

/// `command` without the paths of the machine that ran it: the store named by `--store`
/// becomes `STORE` wherever it appears, and any other absolute path keeps its last two parts
/// (`…/bin/lockpick`). A committed page is read on other machines, where those paths mean
/// nothing.
fn without_machine_paths(command: &str) -> String {
    let words: Vec<&str> = command.split(' ').collect();
    let store = words
        .iter()
        .position(|w| *w == "--store")
        .and_then(|i| words.get(i + 1))
        .filter(|s| s.starts_with('/'))
        .map(|s| s.trim_end_matches('/').to_owned());
    let out: Vec<String> = words
        .iter()
        .map(|w| match &store {
            Some(s) if *w == s.as_str() || w.starts_with(&format!("{s}/")) => {
                format!("STORE{}", &w[s.len()..])
            }
            _ if w.starts_with('/') => {
                let parts: Vec<&str> = w.trim_end_matches('/').rsplit('/').take(2).collect();
                let tail: Vec<&str> = parts.into_iter().rev().collect();
                format!("…/{}", tail.join("/"))
            }
            _ => (*w).to_owned(),
        })
        .collect();
    out.join(" ")
}

/// What the page's runs cover: the shard, the shards missing, and whether every cell has the
/// runs asked for (its seeds, or with `--until` a sure answer).
/// How long the harness itself stood still at worst in the runs that recorded it (run.json's
/// `runtime_stall`): a reader can weigh a verdict against the lease with it.
fn stall_sentence(record: &MatrixRecord) -> Option<String> {
    let mut stalls: Vec<(u64, &RunSummary)> = (record.cells.iter())
        .flat_map(|c| &c.runs)
        .filter_map(|r| Some((r.runtime_stall_ms?, r)))
        .collect();
    stalls.sort_by_key(|(ms, _)| *ms);
    let (worst, run) = *stalls.last()?;
    let median = stalls[stalls.len() / 2].0;
    Some(format!(
        "**The harness's own stalls:** in each run a 10 ms timer of lockpick's runtime (where the built-in clients, the nemesis and the adapters' drivers run) was at most {worst} ms late ({} × {} seed {}; median of the runs' worst {median} ms, over {} runs). A run's timing is the lock's and its fault's only to within that.",
        run.row,
        run.column,
        run.seed,
        stalls.len()
    ))
}

fn completeness(record: &MatrixRecord) -> String {
    let mut out = String::new();
    let made: Vec<u64> = record
        .cells
        .iter()
        .filter(|c| {
            !matches!(
                c.status,
                CellStatus::NotApplicable(_)
                    | CellStatus::NotInjectable(_)
                    | CellStatus::Untestable(_)
            )
        })
        .map(|c| c.runs_made)
        .collect();
    let (lo, hi) = (
        made.iter().min().copied().unwrap_or(0),
        made.iter().max().copied().unwrap_or(0),
    );
    if let Some(shard) = &record.shard {
        let _ = writeln!(
            out,
            "\n**Shard {shard}:** only this shard's runs; `lockpick merge` joins the shards' stores."
        );
    }
    if !record.missing_shards.is_empty() {
        let _ = writeln!(
            out,
            "\n**Shards missing:** {} (their runs are not counted).",
            record.missing_shards.join(", ")
        );
    }
    if let Some(u) = &record.until {
        let open = (record.cells.iter())
            .filter(|c| {
                // A cell with no run that counted is open only if its bound is still in reach.
                let (k, n) = c.rate.as_ref().map_or((0, 0), |r| (r.k, r.n));
                u.open(k, n, c.runs_made)
                    && !matches!(
                        c.status,
                        CellStatus::NotApplicable(_)
                            | CellStatus::NotInjectable(_)
                            | CellStatus::Untestable(_)
                            | CellStatus::NotExposed(_)
                    )
            })
            .filter(|c| c.runs_made < u.max_seeds)
            .count();
        let _ = writeln!(
            out,
            "\n**Seeds until sure:** each cell ran {} seed(s), then more until it had a violation or the 95% upper bound of its violation rate was at most {} (at most {} seeds, and not for a cell too few of whose runs were exposed to get there within them); the cells below have {lo} to {hi} run(s) each.{}",
            record.seeds,
            percent_up(u.bound),
            u.max_seeds,
            if open > 0 {
                format!(" **Incomplete:** {open} cell(s) still short of it (resume with `cargo run -- matrix --resume store/matrix/{}`).", record.started)
            } else {
                String::new()
            }
        );
    } else if lo < record.seeds {
        let _ = writeln!(
            out,
            "\n**Incomplete:** {} seeds per cell were asked for; the cells below have {lo} to {hi} run(s) each (resume with `cargo run -- matrix --resume store/matrix/{}`).",
            record.seeds, record.started
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::{aggregate, CellHead};

    fn cell(row: &str, column: &str, k: u64, n: u64) -> CellSummary {
        let runs = (0..n)
            .map(|s| {
                let verdict = if s < k { "invalid" } else { "valid" };
                RunSummary::checked(row, column, s, verdict)
            })
            .collect();
        let head = CellHead {
            row: row.into(),
            column: column.into(),
            expected: "valid".into(),
            ..CellHead::default()
        };
        aggregate(head, runs)
    }

    #[test]
    fn cells_are_one_line_links_and_unsafe_stands_out() {
        let safe = md_cell(&cell("redis", "client-pause", 0, 10));
        assert!(!safe.contains(' '), "{safe}");
        assert!(
            safe.starts_with("[safe&nbsp;0/10") && safe.ends_with("](#cell-redis--client-pause)"),
            "{safe}"
        );
        let broke = md_cell(&cell("etcd-3.6", "node crash", 10, 10));
        assert!(broke.starts_with("[**🔴&nbsp;UNSAFE&nbsp;10/10"), "{broke}");
        assert!(
            broke.ends_with("**](#cell-etcd-3-6--node-crash)"),
            "{broke}"
        );
    }

    #[test]
    fn the_page_names_the_run_where_the_harness_stood_still_longest() {
        let mut runs: Vec<RunSummary> = (1..=3)
            .map(|s| RunSummary::checked("redis", "latency", s, "valid"))
            .collect();
        (runs[0].runtime_stall_ms, runs[1].runtime_stall_ms) = (Some(12), Some(640));
        let head = CellHead {
            row: "redis".into(),
            column: "latency".into(),
            ..CellHead::default()
        };
        let record = MatrixRecord::of_cells(vec![aggregate(head, runs)]);
        let said = stall_sentence(&record).expect("two runs recorded a stall");
        assert!(
            said.contains("at most 640 ms late (redis × latency seed 2"),
            "{said}"
        );
        assert!(said.contains("over 2 runs"), "{said}");
        assert_eq!(
            stall_sentence(&MatrixRecord::of_cells(vec![cell("a", "b", 0, 2)])),
            None
        );
    }

    #[test]
    fn the_last_command_names_no_path_of_the_machine() {
        assert_eq!(
            without_machine_paths(
                "/opt/x/bin/lockpick matrix --resume /work/pub/m/matrix/2026 scenarios/matrix/default.toml --markdown docs/safety-matrix.md --store /work/pub/m"
            ),
            "…/bin/lockpick matrix --resume STORE/matrix/2026 scenarios/matrix/default.toml --markdown docs/safety-matrix.md --store STORE"
        );
        assert_eq!(
            without_machine_paths("cargo run -- matrix --seeds 3"),
            "cargo run -- matrix --seeds 3"
        );
    }
}
