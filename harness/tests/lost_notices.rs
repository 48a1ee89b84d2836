//! What a real library tells its holder, in the history: redis-semaphore's `onLockLost` under a
//! client pause past its lease, and the ZooKeeper connection states of kazoo and Curator under
//! a pause past the session timeout (protocol 2 `lost` events). Asserted from the history and
//! the report built from it, never from timing: the stopped holder cannot learn before it runs
//! again, by which time ZooKeeper expired its session or Redis its key and another process was
//! granted the lock.

mod scenario_support;

use lockpick_checker::history::{Event, EventKind, Process, F};
use lockpick_checker::lock::{Learned, LockReport};
use lockpick_checker::verdict::Verdict;
use scenario_support::{expecting, history, run};

/// Every `lost` notice the report sets after another process's grant came from the holder,
/// after that grant, and any write it lists lies between the two; at least one such notice
/// exists. The summary prints learned-at beside lost-at.
fn assert_learned_late<'a>(report: &'a LockReport, events: &[Event]) -> Vec<&'a Learned> {
    let late: Vec<_> = report
        .learned
        .iter()
        .filter(|l| {
            l.event == "lost"
                && l.lost_by
                    .as_deref()
                    .is_some_and(|b| b.starts_with("granted to process"))
                && l.delay_ns.is_some_and(|d| d > 0)
        })
        .collect();
    assert!(!late.is_empty(), "{report}");
    for l in &late {
        let lost = &events[l.lost_index.unwrap() as usize];
        let notice = &events[l.index as usize];
        assert_eq!((lost.f, lost.kind), (F::Acquire, EventKind::Ok));
        assert_ne!(lost.process, Process::Client(l.process));
        assert_eq!(
            (notice.f, notice.process),
            (F::Notice, Process::Client(l.process))
        );
        assert!(lost.index < notice.index);
        for &w in &l.writes_between {
            let write = &events[w as usize];
            assert_eq!((write.f, write.kind), (F::Write, EventKind::Invoke));
            assert_eq!(write.process, Process::Client(l.process));
            assert!(lost.index < w && w < notice.index);
        }
    }
    let summary = report.to_string();
    assert!(summary.contains("TOLD: process"), "{summary}");
    assert!(summary.contains("after it lost the lock at"), "{summary}");
    late
}

/// The notices of a run, each checked to be a client's `info` carrying one of `events`.
fn notices<'a>(events: &'a [Event], allowed: &[&str]) -> Vec<&'a Event> {
    let told: Vec<&Event> = events.iter().filter(|e| e.f == F::Notice).collect();
    for e in &told {
        assert!(matches!(e.process, Process::Client(_)), "{e:?}");
        assert_eq!(e.kind, EventKind::Info);
        assert!(
            allowed.contains(&e.value.event.as_deref().unwrap_or("")),
            "{e:?}"
        );
    }
    told
}

/// Runs a ZooKeeper library's session-expiry scenario: the library's connection listener told
/// the stopped holder LOST, after another process was granted the lock.
fn assert_zookeeper_library_told_lost(scenario: &str) {
    let (report, dir) = expecting(run(scenario), Verdict::Invalid);
    let events = history(&dir);
    let told = notices(&events, &["lost", "suspended", "reconnected"]);
    assert!(
        told.iter().any(|e| e.value.event.as_deref() == Some("lost")
            && e.value.note.as_deref() == Some("connection state LOST")),
        "{report}"
    );
    assert_learned_late(&report, &events);
}

#[test]
fn kazoo_tells_its_holder_lost_when_zookeeper_expired_its_session() {
    assert_zookeeper_library_told_lost("python-kazoo-session-expiry");
}

#[test]
fn curator_tells_its_holder_lost_when_zookeeper_expired_its_session() {
    assert_zookeeper_library_told_lost("java-curator-mutex-session-expiry");
}

#[test]
fn redis_semaphore_tells_its_holder_of_the_loss_after_another_was_granted() {
    let (report, dir) = expecting(run("node-redis-semaphore-gc-pause"), Verdict::Invalid);
    let hello = std::fs::read_to_string(dir.join("clients/hello.json")).unwrap();
    let hello: serde_json::Value = serde_json::from_str(&hello).unwrap();
    assert_eq!(hello["protocol"], 2, "{hello}");
    assert_eq!(hello["events"], serde_json::json!(["lost"]), "{hello}");

    let events = history(&dir);
    let told = notices(&events, &["lost"]);
    assert!(
        !told.is_empty(),
        "no `lost` notice in the history: {report}"
    );
    for e in &told {
        assert!(
            e.value
                .note
                .as_deref()
                .is_some_and(|n| n.starts_with("Lost mutex for key")),
            "{e:?}"
        );
    }

    // Each notice in the report, beside the loss; at least one after another process's grant,
    // with the holder's write in between (lockpick writes as soon as the pause ends).
    assert_eq!(report.learned.len(), told.len(), "{report}");
    let late = assert_learned_late(&report, &events);
    assert!(late.iter().any(|l| l.wrote_between()), "{report}");
}
