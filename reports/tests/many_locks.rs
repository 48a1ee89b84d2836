//! The report of a run over many locks stays readable: a per-lock table of the worst and
//! busiest locks instead of one row or series per lock, and fencing tokens judged per lock.

mod support;

use lockpick_checker::history::{EventKind, Process, F};
use lockpick_reports::{render_run_report, RunView};
use support::{results_for, token, History};

/// `locks` locks taken in turn by 8 clients, each lock's tokens starting at 1 (each lock has
/// its own counter and resource); on `lock-7` a second client takes the lock while the first
/// still holds it.
fn many_lock_history(locks: usize) -> Vec<lockpick_checker::history::Event> {
    let mut h = History::default();
    let mut t = 0.0;
    for i in 0..locks {
        let p = Process::Client(i as u64 % 8);
        let start = h.events.len();
        h.push(t, p, EventKind::Invoke, F::Acquire, Default::default());
        h.push(t + 0.1, p, EventKind::Ok, F::Acquire, token(1));
        if i == 7 {
            let q = Process::Client(99);
            h.push(
                t + 0.2,
                q,
                EventKind::Invoke,
                F::Acquire,
                Default::default(),
            );
            h.push(t + 0.3, q, EventKind::Ok, F::Acquire, token(2));
            h.push(
                t + 0.4,
                q,
                EventKind::Invoke,
                F::Release,
                Default::default(),
            );
            h.push(t + 0.5, q, EventKind::Ok, F::Release, Default::default());
        }
        h.push(t + 0.6, p, EventKind::Invoke, F::Write, token(1));
        h.push(t + 0.7, p, EventKind::Ok, F::Write, token(1));
        h.push(
            t + 0.8,
            p,
            EventKind::Invoke,
            F::Release,
            Default::default(),
        );
        h.push(t + 0.9, p, EventKind::Ok, F::Release, Default::default());
        for e in &mut h.events[start..] {
            e.lock = Some(format!("lock-{i}"));
        }
        t += 1.0;
    }
    h.events
}

#[test]
fn a_many_lock_report_lists_the_worst_locks_and_judges_tokens_per_lock() {
    let events = many_lock_history(300);
    let results = results_for(&events, "many");
    let per_lock = &results.lock.per_lock;
    assert_eq!(per_lock.len(), 300);
    assert_eq!(
        per_lock[0].lock, "lock-7",
        "the lock with the violation first"
    );
    assert_eq!(per_lock[0].double_holders, 1);
    assert!(per_lock[1..].iter().all(|c| c.violations == 0));

    // Token 1 on every lock's own resource is never a token going backwards.
    let view = RunView::new(&events);
    assert_eq!(view.locks, 300);
    assert_eq!(view.accepted.len(), 300);
    assert!(
        view.accepted.iter().all(|w| !w.stale),
        "a lock's first token is not stale"
    );

    let html = render_run_report(&results, &events).unwrap();
    let table = html
        .split("<table id=\"per-lock\">")
        .nth(1)
        .and_then(|t| t.split("</table>").next())
        .expect("a per-lock table");
    assert_eq!(table.matches("<tr").count(), 1 + 20, "a header and 20 rows");
    assert!(table.contains("<td>lock-7</td>"));
    assert!(
        html.contains("20 of 300 locks shown"),
        "a note on the others"
    );
    assert!(html.contains("resources of 300 locks (one series)"));
}

#[test]
fn a_single_lock_report_has_no_per_lock_table() {
    let events = support::gc_pause_history();
    let results = results_for(&events, "one");
    assert_eq!(results.lock.per_lock.len(), 1);
    let html = render_run_report(&results, &events).unwrap();
    assert!(!html.contains("id=\"per-lock\""));
}

#[test]
fn the_report_drawn_in_one_streaming_pass_is_the_one_drawn_from_the_events() {
    // A many-lock run, and a GC pause with a double holder and a stale write.
    for (name, events) in [
        ("many", many_lock_history(300)),
        ("gc-pause", support::gc_pause_history()),
    ] {
        let results = results_for(&events, name);
        let dir = tempfile::tempdir().unwrap();
        let mut lines = String::new();
        for e in &events {
            lines.push_str(&serde_json::to_string(e).unwrap());
            lines.push('\n');
        }
        std::fs::write(dir.path().join("history.jsonl"), lines).unwrap();
        std::fs::write(
            dir.path().join("results.json"),
            serde_json::to_vec(&results).unwrap(),
        )
        .unwrap();
        let path = lockpick_reports::report_run_dir(dir.path()).unwrap();
        let streamed = std::fs::read_to_string(path).unwrap();
        let whole = tempfile::tempdir().unwrap();
        let path = lockpick_reports::write_run_report(whole.path(), &results, &events).unwrap();
        assert!(
            streamed == std::fs::read_to_string(path).unwrap(),
            "{name}: the streamed report differs"
        );
        let page = |d: &std::path::Path| std::fs::read_to_string(d.join("history.html")).unwrap();
        assert!(
            page(dir.path()) == page(whole.path()),
            "{name}: the streamed history page differs"
        );
        assert!(
            streamed.contains("history.html#h-"),
            "{name}: marks link to the history page"
        );
        assert!(
            streamed.contains("id=\"ev-"),
            "{name}: evidence rows are there"
        );
    }
}

#[test]
fn acquire_latencies_streamed_are_those_of_the_run_view() {
    use lockpick_reports::Outcome;
    for (name, events) in [
        ("many", many_lock_history(300)),
        ("gc-pause", support::gc_pause_history()),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        let lines: String = events
            .iter()
            .map(|e| serde_json::to_string(e).unwrap() + "\n")
            .collect();
        std::fs::write(&path, lines).unwrap();
        let streamed = lockpick_reports::acquire_latencies(&path).unwrap();
        let mut whole: Vec<f64> = RunView::new(&events)
            .ops
            .iter()
            .filter(|o| o.f == F::Acquire && o.outcome == Outcome::Ok)
            .map(|o| o.latency_ms())
            .collect();
        whole.sort_by(f64::total_cmp);
        assert!(!whole.is_empty(), "{name}");
        assert_eq!(streamed, whole, "{name}");
    }
}
