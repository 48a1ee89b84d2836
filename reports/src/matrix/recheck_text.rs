//! What a matrix page says of runs checked again from their histories (`matrix --recheck`):
//! how many, by which lockpick and when, and each run whose verdict changed, with what it was.

use super::record::MatrixRecord;

/// A change of verdict: row, column, verdict before, verdict now.
type Change<'a> = (&'a str, &'a str, String, String);

/// The sentence (plain text, for the markdown and the HTML page alike), or `None` when no run
/// of `record` was checked again.
pub fn recheck_sentence(record: &MatrixRecord) -> Option<String> {
    let runs: Vec<_> = (record.cells.iter())
        .flat_map(|c| &c.runs)
        .filter_map(|r| r.recheck.as_ref().map(|k| (r, k)))
        .collect();
    if runs.is_empty() {
        return None;
    }
    let all = record.cells.iter().map(|c| c.runs.len()).sum::<usize>();
    let mut by: Vec<String> = runs
        .iter()
        .map(|(_, k)| format!("{} on {}", k.by, k.at))
        .collect();
    by.sort_unstable();
    by.dedup();
    // Runs of one cell that changed alike are said once, their seeds listed: a fix to the
    // checker often moves a whole column, and a page naming each run would bury the others.
    let name = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".to_owned());
    let mut alike: Vec<(Change, Vec<u64>)> = Vec::new();
    for (r, k) in runs.iter().filter(|(r, k)| k.was != r.verdict) {
        let key = (
            r.row.as_str(),
            r.column.as_str(),
            name(&k.was),
            name(&r.verdict),
        );
        match alike.iter_mut().find(|(k, _)| *k == key) {
            Some((_, seeds)) => seeds.push(r.seed),
            None => alike.push((key, vec![r.seed])),
        }
    }
    let count: usize = alike.iter().map(|(_, seeds)| seeds.len()).sum();
    let changed: Vec<String> = (alike.iter())
        .map(|((row, column, was, now), seeds)| {
            let seeds: Vec<String> = seeds.iter().map(u64::to_string).collect();
            format!(
                "{row} × {column} seed{} {} ({was} before, {now} now)",
                if seeds.len() == 1 { "" } else { "s" },
                seeds.join(", ")
            )
        })
        .collect();
    let mut out = format!(
        "The histories of {} of the {all} runs were checked again by {} (matrix --recheck), after the runs were made; the cells count the verdicts of that check.",
        runs.len(),
        by.join(", and by ")
    );
    if changed.is_empty() {
        out.push_str(" No run's verdict changed.");
    } else {
        out.push_str(&format!(
            " {count} run(s) changed verdict: {}.",
            changed.join("; ")
        ));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::record::{Recheck, RunSummary};
    use crate::matrix::{aggregate, CellHead};

    fn record(runs: Vec<RunSummary>) -> MatrixRecord {
        let head = CellHead {
            row: "lib".into(),
            column: "crash".into(),
            ..CellHead::default()
        };
        MatrixRecord::of_cells(vec![aggregate(head, runs)])
    }

    fn rechecked(seed: u64, now: &str, was: &str) -> RunSummary {
        let mut r = RunSummary::checked("lib", "crash", seed, now);
        r.recheck = Some(Recheck {
            by: "lockpick 0.1.0 (lockpick)".into(),
            at: "20261130T040000Z".into(),
            was: Some(was.into()),
        });
        r
    }

    #[test]
    fn a_matrix_with_no_run_checked_again_says_nothing() {
        let runs = vec![RunSummary::checked("lib", "crash", 1, "valid")];
        assert_eq!(recheck_sentence(&record(runs)), None);
    }

    #[test]
    fn each_run_whose_verdict_changed_is_named_with_what_it_was() {
        let runs = vec![
            rechecked(1, "valid", "stuck"),
            rechecked(2, "stuck", "stuck"),
            RunSummary::checked("lib", "crash", 3, "valid"),
        ];
        let text = recheck_sentence(&record(runs)).unwrap();
        assert!(text.contains("The histories of 2 of the 3 runs"), "{text}");
        assert!(
            text.contains("by lockpick 0.1.0 (lockpick) on 20261130T040000Z"),
            "{text}"
        );
        assert!(
            text.contains(
                "1 run(s) changed verdict: lib × crash seed 1 (stuck before, valid now)."
            ),
            "{text}"
        );
        assert!(!text.contains("seed 2"), "{text}");
    }

    #[test]
    fn runs_of_a_cell_that_changed_alike_are_named_once_with_their_seeds() {
        let runs = vec![
            rechecked(1, "not-exposed", "valid"),
            rechecked(2, "valid", "valid"),
            rechecked(3, "not-exposed", "valid"),
            rechecked(4, "valid", "invalid"),
            rechecked(5, "not-exposed", "valid"),
        ];
        let text = recheck_sentence(&record(runs)).unwrap();
        assert!(
            text.contains(
                "4 run(s) changed verdict: lib × crash seeds 1, 3, 5 (valid before, not-exposed now); lib × crash seed 4 (invalid before, valid now)."
            ),
            "{text}"
        );
    }
}
