//! What a library told its holder (`notice` events, history format 2), set beside when the
//! history shows the lock was lost, on hand-written histories: the lease end or another
//! process's grant, whichever came first; the delay; the holder's writes in between. A notice
//! neither completes nor retires anything.

use lockpick_checker::history::parse_history;
use lockpick_checker::lock::{check_locks, LockCheckParams, LockReport, Property};
use lockpick_checker::verdict::Verdict;

/// Lines of a history: (ms, process, type, f, value JSON, error); numbered in order.
fn history(lines: &[(u64, u64, &str, &str, &str)]) -> String {
    lines
        .iter()
        .enumerate()
        .map(|(i, (ms, p, kind, f, value))| {
            format!(
                r#"{{"v":2,"index":{i},"time_ns":{},"process":{p},"type":"{kind}","f":"{f}","lock":"l","value":{value}}}"#,
                ms * 1_000_000
            ) + "\n"
        })
        .collect()
}

fn check(text: &str) -> LockReport {
    let events = parse_history(text).expect("a valid history");
    check_locks(
        &events,
        &LockCheckParams {
            property: Property::Exclusive,
            deadlock_ms: 0,
        },
    )
}

#[test]
fn a_lease_that_ran_out_before_another_grant_is_when_the_lock_was_lost() {
    let report = check(&history(&[
        (5, 0, "invoke", "acquire", r#"{"lease_ms":100}"#),
        (10, 0, "ok", "acquire", r#"{"token":1,"lease_ms":100}"#),
        (20, 1, "invoke", "acquire", r#"{"lease_ms":100}"#),
        (120, 0, "invoke", "write", r#"{"token":1}"#),
        (121, 0, "ok", "write", r#"{"token":1}"#),
        (150, 1, "ok", "acquire", r#"{"token":2,"lease_ms":100}"#),
        (
            200,
            0,
            "info",
            "notice",
            r#"{"event":"lost","note":"refresh failed"}"#,
        ),
    ]));
    assert_eq!(report.learned.len(), 1, "{report}");
    let l = &report.learned[0];
    assert_eq!((l.process, l.event.as_str(), l.index), (0, "lost", 6));
    assert_eq!(l.lock.as_deref(), Some("l"));
    assert_eq!(l.reason.as_deref(), Some("refresh failed"));
    assert_eq!(l.acquire_index, Some(1));
    // The lease counts from the acquire's invocation (5 ms) for 100 ms.
    assert_eq!(l.lost_ns, Some(105_000_000));
    assert_eq!(l.lost_index, Some(0));
    assert_eq!(l.lost_by.as_deref(), Some("lease ran out"));
    assert_eq!(l.delay_ns, Some(95_000_000));
    assert_eq!(l.writes_between, vec![3]);
    assert!(l.wrote_between());
    assert!(l
        .summary
        .contains("95.000 ms after it lost the lock at 0.105 s (lease ran out"));
    // Information, not a violation: the holder's lease had ended before the other grant.
    assert_eq!(report.verdict, Verdict::Valid, "{report}");
    assert!(report.to_string().contains("TOLD: process 0"), "{report}");
}

#[test]
fn without_a_lease_another_grant_shows_the_loss_even_after_the_notice() {
    let report = check(&history(&[
        (0, 0, "invoke", "acquire", "{}"),
        (10, 0, "ok", "acquire", r#"{"token":1}"#),
        (20, 0, "invoke", "write", r#"{"token":1}"#),
        // The notice comes while the write is in flight: it does not complete it.
        (25, 0, "info", "notice", r#"{"event":"suspended"}"#),
        (30, 0, "ok", "write", r#"{"token":1}"#),
        (40, 0, "info", "notice", r#"{"event":"lost","token":1}"#),
        (45, 1, "invoke", "acquire", "{}"),
        (50, 1, "ok", "acquire", r#"{"token":2}"#),
    ]));
    assert_eq!(report.learned.len(), 2, "{report}");
    assert_eq!(report.stats.writes_ok, 1, "{report}");
    assert_eq!(
        report.stats.acquires_info, 0,
        "a notice retires nothing: {report}"
    );
    let lost = &report.learned[1];
    assert_eq!(lost.event, "lost");
    assert_eq!(lost.lost_ns, Some(50_000_000));
    assert_eq!(lost.lost_index, Some(7));
    assert_eq!(lost.lost_by.as_deref(), Some("granted to process 1"));
    // Told 10 ms before the other grant: learned in time, nothing written in between.
    assert_eq!(lost.delay_ns, Some(-10_000_000));
    assert!(!lost.wrote_between());
    assert!(lost.summary.contains("10.000 ms before it lost the lock"));
}

#[test]
fn a_notice_with_nothing_to_show_the_loss_says_so_and_one_without_a_holding_too() {
    let report = check(&history(&[
        (0, 3, "info", "notice", r#"{"event":"reconnected"}"#),
        (5, 3, "invoke", "acquire", "{}"),
        (10, 3, "ok", "acquire", r#"{"token":1}"#),
        (20, 3, "info", "notice", r#"{"event":"lost"}"#),
    ]));
    assert_eq!(report.learned.len(), 2);
    assert_eq!(report.learned[0].lock, None);
    assert!(report.learned[0].summary.contains("while it held no lock"));
    assert_eq!(report.learned[1].lost_ns, None);
    assert_eq!(report.learned[1].delay_ns, None);
    assert!(report.learned[1]
        .summary
        .contains("when it was lost is not shown"));
}

#[test]
fn a_version_1_history_still_reads() {
    let text = r#"{"v":1,"index":0,"time_ns":0,"process":0,"type":"invoke","f":"acquire","lock":"l"}
{"v":1,"index":1,"time_ns":5,"process":0,"type":"ok","f":"acquire","lock":"l","value":{"token":1}}
"#;
    let report = check(text);
    assert_eq!(report.stats.acquires_ok, 1);
    assert!(report.learned.is_empty());
}

#[test]
fn a_notice_after_the_holder_released_is_about_nothing_it_held() {
    let report = check(&history(&[
        (0, 0, "invoke", "acquire", "{}"),
        (10, 0, "ok", "acquire", r#"{"token":1}"#),
        (20, 0, "invoke", "release", "{}"),
        (21, 0, "ok", "release", "{}"),
        (30, 1, "invoke", "acquire", "{}"),
        (31, 1, "ok", "acquire", r#"{"token":2}"#),
        (50, 0, "info", "notice", r#"{"event":"suspended"}"#),
    ]));
    let l = &report.learned[0];
    assert!(l.released_before);
    assert_eq!((l.lost_ns, l.delay_ns), (None, None));
    assert!(
        l.summary
            .contains("while it held no lock (it invoked the release"),
        "{}",
        l.summary
    );
}
