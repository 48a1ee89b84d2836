//! The report's summary for a hand-built history whose story is known: the sentences, their
//! evidence links, and the sections of the page.

mod support;

use lockpick_reports::{finding_sentences, render_run_report, write_run_report};
use support::{gc_pause_history, results_for};

const EXPECTED: &str = r#"VIOLATION double-holder: processes 0 and 1 both believed they held lock "lock" from 0.420 s to 0.440 s (0.020 s): process 0 (token 1) since 0.102 s until it invoked release at 1.020 s, process 1 (token 2) since 0.420 s until it invoked release at 0.440 s; 1 write(s) in the overlap; faults active: pause of client 0 for 0.900 s from 0.110 s [#1 #4 #5 #6 #7 #12]
VIOLATION stale-write: process 0 wrote with token 1 at 1.011 s after process 1 had written with token 2 at 0.432 s; process 0 had been paused 0.900 s [#5 #6 #10 #11]"#;

#[test]
fn gc_pause_history_summary_sentences() {
    let events = gc_pause_history();
    let results = results_for(&events, "hand-built-gc-pause");
    let got = finding_sentences(&results).join("\n");
    assert_eq!(got, EXPECTED, "\n--- got ---\n{got}\n");
}

#[test]
fn report_page_links_each_violation_to_its_evidence_and_timeline() {
    let events = gc_pause_history();
    let results = results_for(&events, "hand-built-gc-pause");
    let html = render_run_report(&results, &events).unwrap();
    assert!(html.contains(r#"<span id="verdict" class="badge invalid">INVALID</span>"#));
    // The sentence as text (quotes escaped by the template), in its list item.
    assert!(html.contains(
        r##"<li class="violation" id="v-2"><a class="n" href="#v-2">2.</a> <span class="kind">stale-write</span>: process 0 wrote with token 1 at 1.011 s after process 1 had written with token 2 at 0.432 s; process 0 had been paused 0.900 s"##
    ), "{html}");
    assert!(html.contains("both believed they held lock &quot;lock&quot; from 0.420 s"));
    // Every cited index links to a row of the evidence table that exists.
    for i in [1, 4, 5, 6, 7, 10, 11, 12] {
        assert!(
            html.contains(&format!(r##"<a href="#ev-{i}">#{i}</a>"##)),
            "link {i}"
        );
        assert!(html.contains(&format!(r#"<tr id="ev-{i}">"#)), "row {i}");
    }
    assert!(!html.contains(r#"<tr id="ev-2">"#), "uncited line shown");
    // Both violations belong to one episode: one zoomed timeline, linked from each.
    assert_eq!(
        html.matches(r##"<a href="#zoom-1">timeline</a>"##).count(),
        2
    );
    assert!(html.contains(r#"<h3 id="zoom-1">violations 1, 2: double-holder, stale-write between 0.120 s and 1.021 s</h3>"#), "{html}");
    assert!(!html.contains("zoom-2"));
    assert_eq!(
        html.matches("<svg").count(),
        1 + 1 + 3 + 1 + 1,
        "timeline, zoom, latency ×3 (acquire, write, release), throughput, tokens"
    );
    assert!(html.contains("pause of client 0 for 0.900 s from 0.110 s"));
    assert!(html.contains(
        r#"<pre id="reproduce-command" class="command">cargo run -- scenario hand-built-gc-pause --seed 7</pre>"#
    ));
    // issue 38: the card under the verdict tells the first episode in a sentence and holds
    // the command, above the timeline; the violations are grouped by episode with their
    // pairs; the evidence is folded per violation, the lines inside its window marked.
    let card = html.find(r#"<section id="card""#).expect("the card");
    assert!(card < html.find(r#"<section id="timeline">"#).unwrap());
    assert!(html.contains(
        r#"<p id="what-happened">Process 0 held the lock from 0.102 s (token 1); process 1 was granted it at 0.420 s (token 2) while process 0 still believed it held it, during the pause of client 0 for 0.900 s from 0.110 s."#
    ), "{html}");
    assert!(
        html[card..].find(r#"id="reproduce-command""#).unwrap()
            < html[card..].find("</section>").unwrap()
    );
    assert!(
        html.contains(
            r#"<div class="episode" id="episode-1">
<h4>Episode 1 of 1: 1 double-holder, 1 stale-write between 0.120 s and 1.021 s</h4>
<p class="pairs">pairs of processes: 0 &amp; 1</p>"#
        ),
        "{html}"
    );
    assert_eq!(
        html.matches(r#"<details class="evidence""#).count(),
        2,
        "one per violation"
    );
    assert!(html.contains("<summary>violation 2 (stale-write): 4 line(s)</summary>"));
    // A line both violations cite is shown in each; its anchor is on the first.
    assert_eq!(html.matches(r#"<tr id="ev-6">"#).count(), 1);
    assert!(
        html.contains(r#"<tr><td class="mark">●</td><td class="num">6</td>"#),
        "{html}"
    );
    // The write's invoke came before the stale write's window: context, not marked.
    assert!(
        html.contains(r#"<tr><td class="mark"></td><td class="num">5</td>"#),
        "{html}"
    );
    // Every hold, write and fault has a title; those whose line the evidence shows link to it.
    assert!(
        html.contains(r##"<a href="#ev-1"><rect class="hold""##),
        "{html}"
    );
    assert!(html.contains(
        "<title>p0 held the lock 0.102 s – 1.020 s (token 1); lost (history #1)</title>"
    ));
    assert!(html.contains("<title>p0 write with token 1 at 1.011 s → ok (accepted although stale) after 2.00 ms (history #10)</title>"));
    assert!(html.contains("<title>pause of client 0 for 0.900 s from 0.110 s (history #2)</title>"));
    // The pause of client 0 is shaded on its lane, one of two: half the plot's height.
    // The height of the first hover target of `class`.
    let height_of = |class: &str| -> i32 {
        let rect = html
            .split(&format!(r#"<rect class="{class}""#))
            .nth(1)
            .unwrap();
        let after = rect.split("height=\"").nth(1).unwrap();
        after[..after.find('"').unwrap()].parse().unwrap()
    };
    let (height, lane) = (height_of("fault"), height_of("hold"));
    assert!(
        height < 2 * lane,
        "a client's pause on its lane only: {height} px"
    );
    // Charts are as wide as the page: no fixed width.
    assert!(html.contains(r#"xmlns="http://www.w3.org/2000/svg" width="100%">"#));
    assert!(!html.contains(r#"<svg width="1100""#));
    // Self-contained: nothing to fetch.
    assert!(!html.contains("src=\"http"), "external fetch");
    assert!(!html.contains("<script src"), "external script");
    assert!(!html.contains("<link"), "external stylesheet");
    std::fs::write(
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("summary-report.html"),
        &html,
    )
    .unwrap();
}

#[test]
fn the_report_says_how_the_clients_used_the_lock_when_the_results_do() {
    let events = gc_pause_history();
    let mut results = results_for(&events, "hand-built-gc-pause");
    let html = render_run_report(&results, &events).unwrap();
    assert!(
        !html.contains(" client)</span>"),
        "older results say nothing"
    );
    results.discipline = Some("trusting".to_owned());
    let html = render_run_report(&results, &events).unwrap();
    assert!(html.contains(">(trusting client)</span>"), "{html}");
}

#[test]
fn report_is_written_into_the_run_folder() {
    let dir = tempfile::tempdir().unwrap();
    let events = gc_pause_history();
    let results = results_for(&events, "hand-built-gc-pause");
    let path = write_run_report(dir.path(), &results, &events).unwrap();
    assert_eq!(path, dir.path().join("report.html"));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("<!DOCTYPE html>"));
    if let Ok(out) = std::env::var("LOCKPICK_REPORT_SAMPLE") {
        std::fs::copy(&path, out).unwrap();
    }
}

#[test]
fn thousands_of_violations_print_the_first_few_per_kind_with_counts_and_point_at_the_report() {
    use lockpick_checker::lock::{FindingKind, KindCount, PRINTED_PER_KIND};
    let events = gc_pause_history();
    let mut results = results_for(&events, "hand-built-gc-pause");
    // The gc-pause story's two violations, as a broken lock gives them by the thousand: the
    // checker lists 100 of a kind and counts the rest.
    let double = results.lock.violations[0].clone();
    let stale = results.lock.violations[1].clone();
    assert_eq!(
        (double.kind, stale.kind),
        (FindingKind::DoubleHolder, FindingKind::StaleWrite)
    );
    results.lock.violations = std::iter::repeat_n(double, 100)
        .chain(std::iter::repeat_n(stale, 5))
        .collect();
    results.lock.omitted_violations = 2400;
    results.lock.violation_counts = vec![
        KindCount {
            kind: FindingKind::DoubleHolder,
            count: 2500,
        },
        KindCount {
            kind: FindingKind::StaleWrite,
            count: 5,
        },
    ];
    let dir = std::path::Path::new("store/x/run");
    let text = lockpick_reports::text_summary(&results, dir);
    let lines: Vec<&str> = text.lines().collect();
    let count = |prefix: &str| lines.iter().filter(|l| l.starts_with(prefix)).count();
    assert_eq!(
        count("  VIOLATION double-holder: "),
        PRINTED_PER_KIND,
        "{text}"
    );
    assert_eq!(
        count("  VIOLATION stale-write: "),
        PRINTED_PER_KIND,
        "{text}"
    );
    assert!(
        text.contains("  … and 2497 more double-holder (2500 in all)\n"),
        "{text}"
    );
    assert!(
        text.contains("  … and 2 more stale-write (5 in all)\n"),
        "{text}"
    );
    assert!(
        text.contains("every one is in store/x/run/report.html and store/x/run/results.json"),
        "{text}"
    );
    assert!(lines.len() < 20, "a screenful, not a hundred lines: {text}");
}

/// Process 0 takes the lock and crashes holding it (no lease); process 1 asks every half
/// second for 6 s and never gets it: a deadlock, with no second holder.
fn crashed_holder_history() -> Vec<lockpick_checker::history::Event> {
    use lockpick_checker::history::{EventKind::*, Process, Value, F};
    let (p0, p1) = (Process::Client(0), Process::Client(1));
    let mut h = support::History::default();
    h.push(0.0, p0, Invoke, F::Acquire, Value::default());
    h.push(5.0, p0, Ok, F::Acquire, support::token(1));
    h.push(
        100.0,
        Process::Nemesis,
        Info,
        F::Crash,
        Value {
            client: Some(0),
            ..Value::default()
        },
    );
    for i in 0..12 {
        let t = 200.0 + 500.0 * f64::from(i);
        h.push(t, p1, Invoke, F::Acquire, Value::default());
        h.push_err(
            t + 400.0,
            p1,
            Fail,
            F::Acquire,
            Value::default(),
            Some("timeout"),
        );
    }
    h.events
}

#[test]
fn a_deadlock_is_reported_stuck_never_invalid() {
    use lockpick_checker::verdict::Verdict;
    let events = crashed_holder_history();
    let results = results_for(&events, "hand-built-crash");
    assert_eq!(results.verdict, Verdict::Stuck);
    let sentences = finding_sentences(&results);
    assert!(
        sentences[0].starts_with("STUCK deadlock: "),
        "{sentences:?}"
    );
    let summary = lockpick_reports::text_summary(&results, std::path::Path::new("run"));
    assert!(
        summary.starts_with("hand-built-crash on redis, seed 7: STUCK\n"),
        "{summary}"
    );
    assert!(
        summary.contains("STUCK is liveness, not safety"),
        "{summary}"
    );
    assert!(!summary.contains("VIOLATION"), "{summary}");
    let html = render_run_report(&results, &events).unwrap();
    assert!(html.contains(r#"<span id="verdict" class="badge stuck">STUCK</span>"#));
    assert!(
        html.contains("<h3>Liveness failures, by episode</h3>"),
        "{html}"
    );
    assert!(html.contains(r##"<li class="liveness" id="v-1"><a class="n" href="#v-1">1.</a> <span class="kind">deadlock</span>"##));
}

#[test]
fn a_run_whose_fault_opened_no_window_is_reported_not_exposed_never_valid() {
    use lockpick_checker::exposure::{exposures, FaultRule, LockShape, Plan, Rule};
    use lockpick_checker::fault_verbs::Target;
    use lockpick_checker::verdict::Verdict;
    let events = gc_pause_history();
    let plan = |lease_ms| Plan {
        faults: vec![FaultRule {
            verb: lockpick_checker::history::F::Pause,
            target: Target::Client,
            rule: Rule::PauseOutlastsLease,
        }],
        lock: LockShape {
            lease_ms: Some(lease_ms),
            nodes: vec!["n1".into()],
            quorum: 1,
            waiter_sessions: false,
            renewed_unseen: false,
        },
    };
    // Against a 1000 ms lease the 900 ms pause of the holder granted at 102 ms ended inside
    // it: as the runner writes a clean run of it.
    let found = exposures(&events, plan(1000));
    let mut results = results_for(&events, "hand-built-short-pause");
    results.lock.violations.clear();
    results.lock.violation_counts.clear();
    results.verdict = Verdict::NotExposed;
    let why = found.summary().unwrap_err();
    assert_eq!(
        why,
        "pause of client 0 at 0.110 s–1.010 s: the pause ended 908 ms after client 0's lease began, within its 1000 ms lease"
    );
    results.not_exposed = Some(why.clone());
    results.exposures = Some(found);
    let summary = lockpick_reports::text_summary(&results, std::path::Path::new("run"));
    assert!(
        summary.starts_with("hand-built-short-pause on redis, seed 7: NOT EXPOSED\n"),
        "{summary}"
    );
    assert!(
        summary.contains(&format!("  NOT EXPOSED: {why}\n")),
        "{summary}"
    );
    assert!(
        summary.contains("exposure: 0 of 1 fault instance(s) opened a window"),
        "{summary}"
    );
    let html = render_run_report(&results, &events).unwrap();
    assert!(html.contains(r#"<span id="verdict" class="badge not-exposed">NOT EXPOSED</span>"#));
    assert!(html.contains(r#"<p id="not-exposed">"#), "{html}");
    assert!(html.contains(r#"<table id="exposures">"#), "{html}");
    assert!(
        html.contains("<td>pause-outlasts-lease</td><td>no</td>"),
        "{html}"
    );

    // Against a 200 ms lease the same pause outlasted it, and process 1 was granted at 420 ms
    // while process 0 still held: exposed, with the window on the page.
    let found = exposures(&events, plan(200));
    assert!(found.exposed(), "{found:?}");
    results.exposures = Some(found);
    let html = render_run_report(&results, &events).unwrap();
    assert!(
        html.contains("<td>pause-outlasts-lease</td><td>yes</td><td>0.302 s–"),
        "{html}"
    );
}

#[test]
fn a_library_run_is_headed_and_summed_up_by_its_library_and_the_card_says_the_scenario() {
    // issue 38: the adapter's hello names the library; the page says it, not only the lock.
    let events = gc_pause_history();
    let mut results = results_for(&events, "hand-built-gc-pause");
    results.backend = "process@redis".to_owned();
    results.library = Some("Redisson 3.52.0".to_owned());
    results.description = Some("A pause past the lease.".to_owned());
    let html = render_run_report(&results, &events).unwrap();
    assert!(html.contains(
        r#"<h1>hand-built-gc-pause on <span id="library">Redisson 3.52.0</span> (process@redis), seed 7"#
    ), "{html}");
    assert!(
        html.contains("<td>Redisson 3.52.0 on process@redis"),
        "{html}"
    );
    assert!(html.contains(
        r#"<p id="card-library"><b>Library:</b> Redisson 3.52.0, through its adapter</p>"#
    ));
    assert!(html.contains(
        r#"<p id="scenario-description"><b>The scenario:</b> A pause past the lease.</p>"#
    ));
    let text = lockpick_reports::text_summary(&results, std::path::Path::new("run"));
    assert!(
        text.starts_with("hand-built-gc-pause on Redisson 3.52.0 (process@redis), seed 7: "),
        "{text}"
    );
}

#[test]
fn the_compare_page_names_each_backend_s_library_and_lease() {
    // issue 38: a library compared beside a built-in lock is named, with each one's lease.
    use lockpick_reports::{render_comparison, ComparedBackend, ComparedRun, Comparison};
    let events = gc_pause_history();
    let store = tempfile::tempdir().unwrap();
    let mut backends = Vec::new();
    for (backend, library) in [("process@redis", Some("Redisson 3.52.0")), ("redis", None)] {
        let dir = store.path().join(backend);
        std::fs::create_dir_all(&dir).unwrap();
        let mut lines = String::new();
        for e in &events {
            let mut e = e.clone();
            if e.f == lockpick_checker::history::F::Acquire
                && e.kind == lockpick_checker::history::EventKind::Ok
            {
                e.value.lease_ms = Some(300);
            }
            lines.push_str(&serde_json::to_string(&e).unwrap());
            lines.push('\n');
        }
        std::fs::write(dir.join("history.jsonl"), lines).unwrap();
        let mut results = results_for(&events, "hand-built-gc-pause");
        results.backend = backend.to_owned();
        results.library = library.map(str::to_owned);
        backends.push(ComparedBackend {
            backend: backend.to_owned(),
            run: ComparedRun {
                dir,
                results,
                skipped_faults: Vec::new(),
            },
        });
    }
    let c = Comparison {
        scenario: "hand-built-gc-pause".into(),
        seed: 7,
        faults: Vec::new(),
        backends,
        reproduce: "lockpick compare hand-built-gc-pause".into(),
    };
    let html = render_comparison(&c, store.path()).unwrap();
    assert!(
        html.contains(
            r#"<th><span class="library">Redisson 3.52.0</span> on process@redis</th><td class="num lease">300 ms</td>"#
        ),
        "{html}"
    );
    assert!(
        html.contains(r#"<th>redis</th><td class="num lease">300 ms</td>"#),
        "{html}"
    );
    assert!(
        html.contains("<h3>Redisson 3.52.0 on process@redis <span"),
        "{html}"
    );
}

#[test]
fn the_card_says_where_a_lease_was_counted_from_when_the_acquire_waited() {
    // Process 0 asked at 100 ms for a 1000 ms lease and was granted at 700 ms, its library
    // naming no lease: its lease is counted from the request, and the card says so, or
    // "ran out at 1.100 s" reads as too early for a hold from 0.700 s.
    use lockpick_checker::history::{EventKind::*, Process, Value, F};
    use support::{token, History};
    let (p0, p1, nem) = (Process::Client(0), Process::Client(1), Process::Nemesis);
    let mut h = History::default();
    let lease = Value {
        lease_ms: Some(1000),
        ..Value::default()
    };
    h.push(100.0, p0, Invoke, F::Acquire, lease.clone());
    h.push(700.0, p0, Ok, F::Acquire, token(1));
    let pause = Value {
        client: Some(0),
        point: Some("before-write".into()),
        ms: Some(800),
        ..Value::default()
    };
    h.push(710.0, nem, Info, F::Pause, pause);
    h.push(800.0, p1, Invoke, F::Acquire, lease.clone());
    h.push(1200.0, p1, Ok, F::Acquire, token(2));
    h.push(1210.0, p1, Invoke, F::Release, token(2));
    h.push(1211.0, p1, Ok, F::Release, Value::default());
    let resume = Value {
        client: Some(0),
        ..Value::default()
    };
    h.push(1510.0, nem, Info, F::Resume, resume);
    h.push(1520.0, p0, Invoke, F::Release, token(1));
    h.push(1521.0, p0, Ok, F::Release, Value::default());
    let events = h.events;
    let results = results_for(&events, "hand-built-waited");
    let html = render_run_report(&results, &events).unwrap();
    assert!(
        html.contains(
            "Process 0 held the lock from 0.700 s (token 1) and its lease, counted from its request at 0.100 s, ran out at 1.100 s; process 1 was granted it at 1.200 s"
        ),
        "{html}"
    );
}
