//! Pauses inside library calls (`client-pause` at `during-op`), tried on lockpick's own toy
//! locks (clients/python/toys): a release that is GET, compare, then DEL in two round trips is
//! caught by a stop that falls between them, and the correct compare-and-delete release under
//! the same pause is never flagged. Real redis-server, real redis-py, real SIGSTOP; six seeds
//! each, [`AT_ONCE`] run at a time within a test (beside other tests: a loaded machine only
//! widens the gap between the GET and the DEL, and cannot make the correct release delete
//! another's key). The runs are 15 s: a stop falls between the GET and the DEL
//! in about one release in four, and 5 s runs (about six such stops) once missed three seeds
//! of ten on a loaded CI machine.
//!
//! The bug's test asserts a rate: two holders in at least [`MIN_CAUGHT`] of the six seeds.
//! docs/tiers.md gives its chance of failing with nothing wrong, from the number of double
//! holders a 15 s run shows (the test prints each seed's count).
//!
//! Each double holder's explanation must name its cause first, and the history must bear it out
//! ([`explained`]), in every explanation of every run (not a rate: see [`explained`] for why):
//! the process whose release deleted the first holder's key and the pause inside that release,
//! or, when a loaded machine rather than the nemesis stretched a release or a hold, that
//! release without a pause, or the first holder's lease running out.

mod scenario_support;

use lockpick_checker::history::{Event, EventKind, Process, F};
use lockpick_checker::lock::{Finding, FindingKind};
use lockpick_checker::verdict::Verdict;
use lockpick_harness::scenario::load_scenario;
use scenario_support::{history, kinds, run_in};

const SEEDS: std::ops::RangeInclusive<u64> = 1..=6;

/// Runs at once: two. Three at once (a clean-clone CI of 7d27887) loaded the machine enough
/// for cascades (a release that crossed another's grant, then that holder's own release
/// deleting a third's key) whose double holders the culprit rule did not name as this test
/// then asked (seed 6: 2 of 8); one at a time followed. Since [`explained`] checks a release
/// that load stretched, and a lease that load outlasted, against the history as it checks a
/// paused release, two at once halve the test's time (about 100 s of CI's three slots each).
const AT_ONCE: usize = 2;

/// Seeds of six in which the GET-then-DEL toy must show two holders. A seed misses only when
/// none of its double-holder episodes happens; docs/tiers.md derives the chance that four or
/// more of six miss with nothing wrong (below 1 in 10,000) from the counts measured.
const MIN_CAUGHT: usize = 3;

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
    /// Every finding's sentence, and what is wrong with each double holder's explanation.
    summaries: Vec<String>,
    misexplained: Vec<String>,
    /// The cause each double holder's explanation named, once the history bore it out.
    causes: Vec<Cause>,
}

/// What a double holder's explanation named, borne out by the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cause {
    /// A release that a nemesis pause stopped between its GET and its DEL: the bug under the
    /// fault this scenario injects.
    PausedRelease,
    /// A release with no pause inside it that deleted another's key: the same bug, the gap
    /// between its GET and its DEL stretched by a loaded machine.
    Release,
    /// The first holder's lease ran out before the second grant: a holder stalled by a loaded
    /// machine, which no lock survives.
    Lease,
}

/// Every seed of [`SEEDS`] of `name`, [`AT_ONCE`] at a time, each on a runtime of its own;
/// in seed order.
fn run_seeds(name: &str) -> Vec<(u64, Seen)> {
    let seeds: Vec<u64> = SEEDS.collect();
    let mut seen = Vec::new();
    for round in seeds.chunks(AT_ONCE) {
        std::thread::scope(|s| {
            let runs: Vec<_> = (round.iter())
                .map(|&seed| {
                    s.spawn(move || {
                        let rt = tokio::runtime::Runtime::new().unwrap();
                        (seed, run_seed(&rt, name, seed))
                    })
                })
                .collect();
            for run in runs {
                seen.push(run.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
            }
        });
    }
    seen
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
    let all: Vec<&Finding> = report
        .violations
        .iter()
        .chain(&report.observations)
        .collect();
    let ttl_ns = load_scenario(name).expect("shipped").lock.ttl_ms * 1_000_000;
    let (causes, misexplained) = (all.iter())
        .filter(|f| f.kind == FindingKind::DoubleHolder)
        .map(|f| explained(f, &events, ttl_ns))
        .partition::<Vec<_>, _>(Result::is_ok);
    Seen {
        verdict,
        summaries: all.iter().map(|f| f.summary.clone()).collect(),
        misexplained: misexplained.into_iter().filter_map(Result::err).collect(),
        causes: causes.into_iter().filter_map(Result::ok).collect(),
        double_holders: kinds(&report.violations)
            .iter()
            .filter(|k| **k == FindingKind::DoubleHolder)
            .count(),
        inside: notes.iter().filter(|n| n.ends_with("no reply yet")).count(),
        notes,
        not_owner: events.iter().any(not_owner),
    }
}

/// The cause the double holder `f` names first, when the history bears it out; else what is
/// wrong. Three forms:
/// - "process C's release (sent …, answered …, paused … inside it) deleted process A's key",
///   or "… may have deleted process A's key (its answer came before process A's grant …" when
///   the two replies crossed: the evidence holds C's release request (its invoke, and its `ok`
///   after A's grant, or when they crossed after A asked and before A's grant); a pause of
///   client C that the history records inside that release before its reply came is among the
///   faults named; and A's own next release failed `not-owner` (its key was gone).
/// - the same without "paused … inside it": likewise, and the history records no pause of
///   client C inside that release (a loaded machine, not the nemesis, stretched it).
/// - "process A's lease … ran out at …": A's grant came more than the lease after A asked for
///   it, before B's grant (a loaded machine stalled the holder; the lease is counted from the
///   request, the latest the lock can have started it).
///
/// Not a rate: the culprit is in the history whenever the bug made the double holder (a
/// release answered `ok` after the holder's grant, or just after the next grant, by a process
/// no longer granted the lock, or just before the holder's grant, past its own lease), so
/// naming it is the checker's rule, not chance; it named the right one in all 143 double
/// holders of 20 runs recorded before (seeds 1-20) and all 61 of seeds 1-10 here. What a
/// loaded machine adds is named too, and checked the same way.
fn explained(f: &Finding, events: &[Event], ttl_ns: u64) -> Result<Cause, String> {
    let fail = |why: &str| Err(format!("{why}: {}", f.summary));
    let a = f.processes[0];
    let at = |i: &u64| &events[*i as usize];
    let grant_of = |p: u64| {
        f.indices.iter().map(at).find(|e| {
            e.process == Process::Client(p) && e.f == F::Acquire && e.kind == EventKind::Ok
        })
    };
    let granted = grant_of(a);
    // A's acquire request that the grant `g` answered.
    let asked_before = |g: &Event| {
        events[..g.index as usize].iter().rev().find(|e| {
            e.process == Process::Client(a) && e.f == F::Acquire && e.kind == EventKind::Invoke
        })
    };
    if f.summary.starts_with(&format!("process {a}'s lease")) {
        let b = f.processes[1];
        let (Some(ga), Some(gb)) = (granted, grant_of(b)) else {
            return fail("the evidence lacks a grant");
        };
        return match asked_before(ga) {
            Some(asked) if asked.time_ns + ttl_ns < gb.time_ns => Ok(Cause::Lease),
            _ => fail("names the lease, but the second grant came within the lease of the first's request"),
        };
    }
    let Some(rest) = f.summary.strip_prefix("process ") else {
        return fail("names no process first");
    };
    let Some((c, rest)) = rest.split_once("'s release (sent ") else {
        return fail("names no release first");
    };
    let Ok(c) = c.parse::<u64>() else {
        return fail("names no process first");
    };
    let (head, _) = rest.split_once(") ").unwrap_or((rest, ""));
    let says_paused = head.contains(", paused ") && head.ends_with(" inside it");
    let crossed = rest.contains(&format!(
        ") may have deleted process {a}'s key (its answer came before process {a}'s grant"
    ));
    if !crossed && !rest.contains(&format!(") deleted process {a}'s key: ")) {
        return fail("names not the first holder's key");
    }
    let of_c = |e: &&Event| e.process == Process::Client(c) && e.f == F::Release;
    let Some(invoke) = f
        .indices
        .iter()
        .map(at)
        .filter(of_c)
        .find(|e| e.kind == EventKind::Invoke)
    else {
        return fail("the evidence lacks the release's invoke");
    };
    let Some(ok) = f
        .indices
        .iter()
        .map(at)
        .filter(of_c)
        .find(|e| e.kind == EventKind::Ok)
    else {
        return fail("the evidence lacks the release's ok");
    };
    let spanned = |g: &&Event| match crossed {
        false => invoke.index < g.index && g.index < ok.index,
        true => asked_before(g).is_some_and(|asked| asked.index < ok.index && ok.index < g.index),
    };
    if !granted.is_some_and(|g| spanned(&g)) {
        return fail("the release did not span the first holder's grant, nor cross it");
    }
    let cause = if says_paused {
        let inside = f.faults.iter().any(|w| {
            let pause = at(&w.start_index);
            w.f == F::Pause
                && w.client == Some(c)
                && invoke.index < w.start_index
                && w.start_index < ok.index
                && pause.value.note.as_deref().is_some_and(|n| {
                    n.starts_with("in release request ") && n.ends_with("no reply yet")
                })
        });
        if !inside {
            return fail("no fault named is a pause inside that release before its reply");
        }
        Cause::PausedRelease
    } else {
        // No pause named: the history must show none of client C during that release.
        let paused = events[invoke.index as usize..ok.index as usize]
            .iter()
            .any(|e| e.process == Process::Nemesis && e.f == F::Pause && e.value.client == Some(c));
        if paused {
            return fail(
                "names no pause, but the history has one of that client inside the release",
            );
        }
        Cause::Release
    };
    let own_release = events
        .iter()
        .skip(granted.map_or(0, |g| g.index as usize))
        .find(|e| {
            e.process == Process::Client(a) && e.f == F::Release && e.kind != EventKind::Invoke
        });
    if !own_release.is_some_and(not_owner) {
        return fail("the first holder's own release did not find its key gone");
    }
    Ok(cause)
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
    let bug = "toy-get-then-del-release-pause";
    let mut caught = Vec::new();
    for (seed, seen) in run_seeds(bug) {
        assert_pauses_in_releases(bug, seed, &seen);
        let of = |c: Cause| seen.causes.iter().filter(|&&x| x == c).count();
        eprintln!(
            "{bug} --seed {seed}: {:?}, {} double holders ({} by a paused release, {} by a release a loaded machine stretched, {} by a lease a loaded machine outlasted), {} pauses inside a request",
            seen.verdict,
            seen.double_holders,
            of(Cause::PausedRelease),
            of(Cause::Release),
            of(Cause::Lease),
            seen.inside
        );
        if let Some(first) = seen.summaries.first() {
            eprintln!("  e.g. {first}");
        }
        assert!(
            seen.misexplained.is_empty(),
            "{bug} --seed {seed}: {} of {} double holders not explained by the release that deleted the key:\n{}",
            seen.misexplained.len(),
            seen.double_holders,
            seen.misexplained.join("\n")
        );
        // Caught by the pause, as the test says: a double holder a paused release made.
        if seen.verdict == Verdict::Invalid && of(Cause::PausedRelease) > 0 {
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
        "{bug}: two holders in only {} of 6 seeds ({caught:?}); reproduce a miss with `cargo run -- scenario {bug} --seed N`",
        caught.len()
    );
}

#[test]
fn a_compare_and_delete_release_is_never_flagged_under_the_same_pauses() {
    let correct = "toy-compare-and-delete-release-pause";
    for (seed, seen) in run_seeds(correct) {
        assert_pauses_in_releases(correct, seed, &seen);
        assert!(
            seen.double_holders == 0 && seen.verdict == Verdict::Valid,
            "{correct} --seed {seed}: flagged ({:?}, {} double holders); reproduce with `cargo run -- scenario {correct} --seed {seed}`",
            seen.verdict,
            seen.double_holders
        );
        // Nothing found, so nothing blamed: no sentence names a release as a culprit.
        for s in &seen.summaries {
            assert!(
                !s.contains("'s release (sent "),
                "{correct} --seed {seed}: {s}"
            );
        }
    }
}
