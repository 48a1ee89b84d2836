//! Every published Porcupine/Jepsen history in `../shared/data/porcupine` gets the verdict its
//! suite asserts, single-threaded and with parallel parts.

use lockpick_checker::lin_search::Budget;
use lockpick_checker::linearizability::check_file;
use lockpick_checker::models::{find_model, Model};
use lockpick_checker::verdict::Verdict;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn data_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data/porcupine")
        .canonicalize()
        .ok()?;
    dir.join("expected.tsv").is_file().then_some(dir)
}

fn expected(dir: &Path) -> Vec<(PathBuf, &'static dyn Model, Verdict)> {
    let tsv = std::fs::read_to_string(dir.join("expected.tsv")).expect("read expected.tsv");
    tsv.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            let verdict = match cols[2] {
                "linearizable" => Verdict::Valid,
                "illegal" => Verdict::Invalid,
                other => panic!("unknown expected verdict {other}"),
            };
            (
                dir.join(cols[0]),
                find_model(cols[1]).expect("model name"),
                verdict,
            )
        })
        .collect()
}

fn check_all(threads: usize) {
    let Some(dir) = data_dir() else {
        eprintln!(
            "!!! SKIPPED: ../shared/data/porcupine not found next to the workspace; \
             the expected-verdict test did not run !!!"
        );
        return;
    };
    let cases = expected(&dir);
    assert_eq!(cases.len(), 98, "expected.tsv lists 98 histories");
    let budget = Budget {
        time: Some(Duration::from_secs(120)),
        memory_bytes: None,
        threads,
    };
    let mut wrong = Vec::new();
    for (path, model, want) in &cases {
        let report = check_file(path, *model, None, &budget).expect("check history");
        if report.verdict != *want {
            wrong.push(format!(
                "{}: got {}, want {want}",
                path.display(),
                report.verdict
            ));
        }
        if *want == Verdict::Invalid {
            let v = report
                .violation
                .as_ref()
                .expect("invalid report explains itself");
            assert!(!v.window.is_empty(), "{}: empty window", path.display());
            let culprit = v
                .culprit
                .as_ref()
                .expect("violation narrowed to an operation");
            assert!(
                v.window.contains(culprit),
                "{}: culprit outside window",
                path.display()
            );
            let text = report.to_string();
            for part in [
                "invalid",
                "no linearization exists",
                "window:",
                "model state after it",
            ] {
                assert!(
                    text.contains(part),
                    "{}: report lacks {part:?}:\n{text}",
                    path.display()
                );
            }
        }
    }
    assert!(wrong.is_empty(), "wrong verdicts:\n{}", wrong.join("\n"));
}

#[test]
fn every_published_history_gets_its_expected_verdict() {
    check_all(1);
}

#[test]
fn parallel_parts_give_the_same_verdicts() {
    check_all(2);
}
