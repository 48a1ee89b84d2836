//! Pauses inside library calls (`client-pause` at `during-op`), tried on lockpick's own toy
//! locks (clients/python/toys): a release that is GET, compare, then DEL in two round trips is
//! caught by a stop that falls between them, and the correct compare-and-delete release under
//! the same pause is never flagged. Real redis-server, real redis-py, real SIGSTOP; ten seeds
//! each, one run after another within a test (the two tests may run beside each other and
//! beside other tests: a loaded machine only widens the gap between the GET and the DEL). The
//! runs are 15 s: a stop falls between the GET and the DEL in about one release in four, and
//! 5 s runs (about six such stops) once missed three seeds of ten on a loaded CI machine.
//!
//! The bug's test asserts a rate: two holders in at least [`MIN_CAUGHT`] of the ten seeds.
//! docs/tiers.md gives its chance of failing with nothing wrong, from the number of double
//! holders a 15 s run shows (the test prints each seed's count).

mod scenario_support;

use lockpick_checker::history::{Event, EventKind, Process, F};
use lockpick_checker::lock::FindingKind;
use lockpick_checker::verdict::Verdict;
use scenario_support::{history, kinds, run_in};

const SEEDS: std::ops::RangeInclusive<u64> = 1..=10;

/// Seeds of ten in which the GET-then-DEL toy must show two holders. A seed misses only when
/// none of its double-holder episodes happens; docs/tiers.md derives the chance that four or
/// more of ten miss with nothing wrong (below 1 in 10,000) from the counts measured.
const MIN_CAUGHT: usize = 7;

/// What one run showed.
struct Seen {
    verdict: Verdict,
    /// Double-holder findings of the run.
    double_holders: usize,
    /// Pauses that landed inside a request whose reply had not come.
    inside: usize,
    /// Notes of every `during-op` pause.
    notes: Vec<String>,
    /// Some release failed `not-owner`: a holder found its key gone or taken.
    not_owner: bool,
}

fn run_seed(rt: &tokio::runtime::Runtime, name: &str, seed: u64) -> Seen {
    let (report, verdict, expected, dir) = run_in(rt, name, 20, |o| o.seed = Some(seed));
    let events = history(&dir);
    let notes: Vec<String> = events
        .iter()
        .filter(|e| e.process == Process::Nemesis && e.f == F::Pause)
        .filter(|e| e.value.point.as_deref() == Some("during-op"))
        .filter_map(|e| e.value.note.clone())
        .collect();
    assert!(expected.is_some(), "{name} declares what it expects");
    Seen {
        verdict,
        double_holders: kinds(&report.violations)
            .iter()
            .filter(|k| **k == FindingKind::DoubleHolder)
            .count(),
        inside: notes.iter().filter(|n| n.ends_with("no reply yet")).count(),
        notes,
        not_owner: events.iter().any(not_owner),
    }
}

fn not_owner(e: &Event) -> bool {
    e.f == F::Release && e.kind == EventKind::Fail && e.error.as_deref() == Some("not-owner")
}

/// Every pause of the run fell in a release, as the scenario limits it (`ops = ["release"]`),
/// and the history says which request and whether its reply had come.
fn assert_pauses_in_releases(name: &str, seed: u64, seen: &Seen) {
    assert!(
        seen.inside > 0,
        "{name} --seed {seed}: no pause landed inside a request, so the run tested nothing: {:?}",
        seen.notes
    );
    for note in &seen.notes {
        assert!(
            note.starts_with("in release request ")
                && (note.ends_with("no reply yet") || note.ends_with("its reply had already come")),
            "{name} --seed {seed}: {note}"
        );
    }
}

#[test]
fn a_get_then_del_release_is_caught_by_a_pause_inside_it() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let bug = "toy-get-then-del-release-pause";
    let mut caught = Vec::new();
    for seed in SEEDS {
        let seen = run_seed(&rt, bug, seed);
        assert_pauses_in_releases(bug, seed, &seen);
        eprintln!(
            "{bug} --seed {seed}: {:?}, {} double holders, {} pauses inside a request",
            seen.verdict, seen.double_holders, seen.inside
        );
        if seen.verdict == Verdict::Invalid && seen.double_holders > 0 {
            // The DEL removed the next holder's key: that holder's own release found it gone.
            assert!(
                seen.not_owner,
                "{bug} --seed {seed}: no release failed not-owner"
            );
            caught.push(seed);
        }
    }
    assert!(
        caught.len() >= MIN_CAUGHT,
        "{bug}: two holders in only {} of 10 seeds ({caught:?}); reproduce a miss with `cargo run -- scenario {bug} --seed N`",
        caught.len()
    );
}

#[test]
fn a_compare_and_delete_release_is_never_flagged_under_the_same_pauses() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let correct = "toy-compare-and-delete-release-pause";
    for seed in SEEDS {
        let seen = run_seed(&rt, correct, seed);
        assert_pauses_in_releases(correct, seed, &seen);
        assert!(
            seen.double_holders == 0 && seen.verdict == Verdict::Valid,
            "{correct} --seed {seed}: flagged ({:?}, {} double holders); reproduce with `cargo run -- scenario {correct} --seed {seed}`",
            seen.verdict,
            seen.double_holders
        );
    }
}
