//! The per-run `report.html`: under the verdict, the "what happened" card (the first episode
//! in a sentence, the scenario, the library, the command that repeats the run); the summary
//! with the violations grouped by episode, each sentence linked to the history lines that
//! prove it; timeline (overview and a zoom on each episode), latency, throughput, fencing
//! tokens, faults, and the evidence folded per violation.

use crate::charts::{
    latency_svg, server_lanes, throughput_svg, timeline_svg, tokens_svg, Links, ServerLane,
    TimelineSpec,
};
use crate::episodes::{episode_groups, episodes, Episode, EpisodeGroup};
use crate::error::ReportError;
use crate::history_page::HistoryPage;
use crate::quantiles::{latency_quantiles, Quantiles};
use crate::soak_section::{soak_section, Drawn, SoakSection};
use crate::templates::render;
use crate::view::{Lane, RunView, ViewBuilder};
use lockpick_checker::faults::secs;
use lockpick_checker::history::{Event, HistoryReader, F};
use lockpick_checker::lock::{Finding, Learned, TimeWindow};
use lockpick_checker::results::RunResults;
use lockpick_checker::verdict::Verdict;
use lockpick_store::soak::SoakRecord;
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// At most this many lanes are drawn; the processes named in findings come first, then the
/// busiest. Retirements can create hundreds of processes in a long run.
const MAX_LANES: usize = 40;
/// At most this many episodes (violations close in time) get a zoomed timeline.
const MAX_ZOOMS: usize = 6;
/// At most this many locks get a row in the per-lock table of a many-lock run: the worst and
/// busiest (the checker sorts them so).
const MAX_LOCK_ROWS: usize = 20;
/// At most this many cited history lines are shown as evidence.
const MAX_EVIDENCE: usize = 1500;

/// One finding as the report lists it.
#[derive(Debug, Serialize)]
struct FindingRow {
    id: String,
    kind: String,
    /// `violation` for a safety violation, `liveness` for a deadlock or a lockout (the run is
    /// stuck).
    class: &'static str,
    summary: String,
    indices: Vec<u64>,
    /// Anchor of the zoomed timeline, if it has one.
    zoom: Option<String>,
    faults: Vec<String>,
}

#[derive(Debug, Serialize)]
struct Zoom {
    id: String,
    title: String,
    svg: String,
}

/// The violations of one episode (or of the whole run), as the list shows them together.
#[derive(Debug, Serialize)]
struct ViolationGroup {
    id: String,
    title: String,
    pairs: String,
    violations: Vec<FindingRow>,
}

#[derive(Debug, Serialize)]
struct EvidenceRow {
    index: u64,
    time: String,
    line: String,
    /// The row carries the `ev-N` anchor: the first time the line is shown.
    anchor: bool,
    /// The line is inside the finding's window: what broke, not its context.
    offending: bool,
}

/// The cited lines of one violation (or of the other findings), folded.
#[derive(Debug, Serialize)]
struct EvidenceGroup {
    title: String,
    rows: Vec<EvidenceRow>,
}

#[derive(Debug, Serialize)]
struct FaultRow {
    kind: String,
    text: String,
    start_index: u64,
}

#[derive(Debug, Serialize)]
struct Page {
    /// The linearizability check, when the run had one.
    lin: Option<lockpick_checker::results::LinSummary>,
    r: RunSummary,
    card: crate::card::Card,
    /// The violations, grouped by episode.
    groups: Vec<ViolationGroup>,
    observations: Vec<FindingRow>,
    omitted_violations: u64,
    omitted_observations: u64,
    unknowns: Vec<String>,
    timeline: String,
    timeline_note: String,
    zooms: Vec<Zoom>,
    latency: Vec<String>,
    quantiles: Vec<Quantiles>,
    throughput: String,
    tokens: Option<String>,
    faults: Vec<FaultRow>,
    evidence: Vec<EvidenceGroup>,
    evidence_omitted: usize,
    /// What the library told its holders, each beside when the lock was lost.
    learned: Vec<LearnedRow>,
    omitted_learned: u64,
    /// A many-lock run's per-lock table (empty for one lock), and what it leaves out.
    locks: Vec<lockpick_checker::lock::LockCounts>,
    locks_note: String,
    /// A soak's summary, and what of it the charts draw.
    soak: Option<SoakSection>,
}

/// One notice from the library: what the holder was told and when, beside when the history
/// shows it lost the lock.
#[derive(Debug, Serialize)]
struct LearnedRow {
    process: u64,
    event: String,
    lock: String,
    acquire_index: Option<u64>,
    lost_at: String,
    lost_by: String,
    lost_index: Option<u64>,
    learned_at: String,
    index: u64,
    delay: String,
    /// The holder's writes between losing and learning: what makes a late notice unsafe.
    writes_between: Vec<u64>,
    reason: String,
}

fn learned_row(l: &Learned) -> LearnedRow {
    LearnedRow {
        process: l.process,
        event: l.event.clone(),
        lock: l.lock.clone().unwrap_or_else(|| "(none held)".to_owned()),
        acquire_index: l.acquire_index,
        lost_at: l.lost_ns.map_or_else(|| "not shown".to_owned(), secs),
        lost_by: l.lost_by.clone().unwrap_or_default(),
        lost_index: l.lost_index,
        learned_at: secs(l.learned_ns),
        index: l.index,
        delay: l.delay_ns.map_or_else(
            || "–".to_owned(),
            |d| {
                if d >= 0 {
                    format!("{} ms late", lockpick_checker::lock::notices::ms(d))
                } else {
                    format!("{} ms early", lockpick_checker::lock::notices::ms(-d))
                }
            },
        ),
        writes_between: l.writes_between.clone(),
        reason: l.reason.clone().unwrap_or_default(),
    }
}

/// The facts of the summary table.
#[derive(Debug, Serialize)]
struct RunSummary {
    scenario: String,
    backend: String,
    /// The lock library an adapter ran and its version (`Redisson 3.52.0`), if recorded.
    library: Option<String>,
    /// The server and the version it reported (`etcd 3.6.16`), if recorded.
    server: Option<String>,
    /// The start of the servers the run used and which of its runs it was, if recorded.
    instance: Option<String>,
    /// `trusting` or `careful`, when the results say.
    discipline: Option<String>,
    seed: u64,
    verdict: String,
    /// The badge's text: `INVALID`, `STUCK`, `NOT EXPOSED`, …
    headline: String,
    /// Why no fault of the run opened a window for a violation, when the verdict says so.
    not_exposed: Option<String>,
    /// Each fault instance and its exposure; empty for a run without faults or results
    /// written before exposure was judged.
    exposures: Vec<crate::exposure::ExposureRow>,
    expected: Option<String>,
    as_expected: Option<bool>,
    interrupted: bool,
    property: String,
    duration: String,
    ops: u64,
    ops_per_sec: String,
    events: usize,
    processes: usize,
    acquires: String,
    writes: String,
    max_holders: u64,
    reproduce: String,
}

/// One line per finding, as the report's summary states it: violations, then observations,
/// then what could not be decided. Each line cites the history indices that prove it.
pub fn finding_sentences(results: &RunResults) -> Vec<String> {
    let cite = |f: &Finding| {
        let idx: Vec<String> = f.indices.iter().map(|i| format!("#{i}")).collect();
        format!("[{}]", idx.join(" "))
    };
    let lock = &results.lock;
    let mut out: Vec<String> = lock
        .violations
        .iter()
        .map(|f| {
            // A deadlock or a lockout is liveness: the run is stuck, not unsafe.
            let head = if f.kind.is_safety() {
                "VIOLATION"
            } else {
                "STUCK"
            };
            format!("{head} {}: {} {}", f.kind, f.summary, cite(f))
        })
        .collect();
    if lock.omitted_violations > 0 {
        out.push(format!(
            "… and {} more violation(s)",
            lock.omitted_violations
        ));
    }
    out.extend(
        lock.observations
            .iter()
            .map(|f| format!("observed {}: {} {}", f.kind, f.summary, cite(f))),
    );
    if lock.omitted_observations > 0 {
        out.push(format!(
            "… and {} more observation(s)",
            lock.omitted_observations
        ));
    }
    out.extend(lock.learned.iter().map(|l| format!("TOLD: {}", l.summary)));
    if lock.omitted_learned > 0 {
        out.push(format!(
            "… and {} more notice(s) from the library",
            lock.omitted_learned
        ));
    }
    out.extend(lock.unknowns.iter().map(|u| format!("UNKNOWN: {u}")));
    out
}

/// Renders the report of a run from its results and its history. Precondition: `events` is
/// the history the results were checked from, in order.
pub fn render_run_report(results: &RunResults, events: &[Event]) -> Result<String, ReportError> {
    render_events(results, events, None)
}

/// [`render_run_report`], its marks linked to `history.html` rows up to `history_upto`.
fn render_events(
    results: &RunResults,
    events: &[Event],
    history_upto: Option<u64>,
) -> Result<String, ReportError> {
    let cited = cited_indices(results);
    let evidence: Vec<Event> = cited
        .iter()
        .take(MAX_EVIDENCE)
        .filter_map(|&i| events.get(i as usize).cloned())
        .collect();
    render_view(
        results,
        &RunView::new(events),
        &evidence,
        events.len(),
        None,
        history_upto,
    )
}

/// The history indices the findings cite, in order.
fn cited_indices(results: &RunResults) -> BTreeSet<u64> {
    let lock = &results.lock;
    let learned = lock.learned.iter().flat_map(|l| {
        [Some(l.index), l.lost_index, l.acquire_index]
            .into_iter()
            .flatten()
            .chain(l.writes_between.iter().copied())
    });
    lock.violations
        .iter()
        .chain(&lock.observations)
        .flat_map(|f| f.indices.iter().copied())
        .chain(learned)
        .collect()
}

/// Renders the report from a view of the history, the cited events (the first
/// [`MAX_EVIDENCE`] of them, in index order) and the number of events; `history_upto`: the
/// last index the run's `history.html` beside the report has a row for, if it has one.
fn render_view(
    results: &RunResults,
    view: &RunView,
    evidence_events: &[Event],
    n_events: usize,
    soak: Option<SoakSection>,
    history_upto: Option<u64>,
) -> Result<String, ReportError> {
    let lock = &results.lock;
    // The timelines' marks link to the evidence's rows, else to the history page's.
    let evidence: BTreeSet<u64> = evidence_events.iter().map(|e| e.index).collect();
    let linked = Links {
        evidence: &evidence,
        history_upto,
    };
    let server = server_lanes(lock.server.as_ref());
    let (zooms, zoom_of) = zooms(view, &lock.violations, linked, &server)?;
    let mut rows: Vec<Option<FindingRow>> = lock
        .violations
        .iter()
        .zip(zoom_of)
        .enumerate()
        .map(|(n, (f, zoom))| Some(finding_row(format!("v-{}", n + 1), f, zoom)))
        .collect();
    let eps = episodes(&lock.violations, view.end_ns);
    let groups: Vec<ViolationGroup> = episode_groups(&lock.violations, &eps)
        .into_iter()
        .map(|g: EpisodeGroup| ViolationGroup {
            violations: g.members.iter().filter_map(|&m| rows[m].take()).collect(),
            id: g.id,
            title: g.title,
            pairs: g.pairs,
        })
        .collect();
    let observations = lock
        .observations
        .iter()
        .enumerate()
        .map(|(n, f)| finding_row(format!("o-{}", n + 1), f, None))
        .collect();
    // A soak's view holds only the windows around its violations: no overview of the whole.
    let (timeline, timeline_note) = match &soak {
        Some(s) => (String::new(), s.drawn.clone()),
        None => overview_timeline(view, &lock.violations, linked, &server)?,
    };
    let mut latency = Vec::new();
    for f in [F::Acquire, F::Write, F::Release, F::Renew, F::Read] {
        if soak.is_some() {
            break;
        }
        if let Some(svg) = latency_svg(view, f)? {
            latency.push(svg);
        }
    }
    let cited = cited_indices(results);
    let evidence = evidence_groups(results, evidence_events);
    let page = Page {
        r: run_summary(results, view, n_events),
        card: crate::card::card(results, view, &eps),
        groups,
        observations,
        omitted_violations: lock.omitted_violations,
        omitted_observations: lock.omitted_observations,
        unknowns: lock.unknowns.clone(),
        learned: lock.learned.iter().map(learned_row).collect(),
        omitted_learned: lock.omitted_learned,
        timeline,
        timeline_note,
        zooms,
        latency,
        quantiles: if soak.is_some() {
            Vec::new()
        } else {
            latency_quantiles(&view.ops)
        },
        throughput: if soak.is_some() {
            String::new()
        } else {
            throughput_svg(view)?
        },
        tokens: if soak.is_some() {
            None
        } else {
            tokens_svg(view)?
        },
        faults: view
            .faults
            .iter()
            .map(|w| FaultRow {
                kind: w.f.name().to_owned(),
                text: w.describe(),
                start_index: w.start_index,
            })
            .collect(),
        evidence,
        evidence_omitted: cited.len().saturating_sub(MAX_EVIDENCE),
        lin: results.linearizability.clone(),
        locks: if lock.per_lock.len() > 1 {
            lock.per_lock.iter().take(MAX_LOCK_ROWS).cloned().collect()
        } else {
            Vec::new()
        },
        locks_note: locks_note(&lock.per_lock),
        soak,
    };
    render("report.html", &page)
}

/// The cited lines grouped by the violation that cites them, in its order, then the lines
/// only the other findings cite. A line cited twice is shown in each group; its anchor is on
/// the first.
fn evidence_groups(results: &RunResults, events: &[Event]) -> Vec<EvidenceGroup> {
    let by_index: std::collections::HashMap<u64, &Event> =
        events.iter().map(|e| (e.index, e)).collect();
    let row = |e: &Event, anchor: bool, offending: bool| EvidenceRow {
        index: e.index,
        time: secs(e.time_ns),
        line: serde_json::to_string(e).unwrap_or_default(),
        anchor,
        offending,
    };
    let mut anchored = BTreeSet::new();
    let mut groups = Vec::new();
    for (n, f) in results.lock.violations.iter().enumerate() {
        let rows: Vec<EvidenceRow> = f
            .indices
            .iter()
            .filter_map(|i| by_index.get(i))
            .map(|e| {
                let inside = f
                    .window
                    .is_some_and(|w| (w.start_ns..=w.end_ns).contains(&e.time_ns));
                row(e, anchored.insert(e.index), inside)
            })
            .collect();
        if !rows.is_empty() {
            groups.push(EvidenceGroup {
                title: format!("violation {} ({}): {} line(s)", n + 1, f.kind, rows.len()),
                rows,
            });
        }
    }
    let rest: Vec<EvidenceRow> = events
        .iter()
        .filter(|e| !anchored.contains(&e.index))
        .map(|e| row(e, true, false))
        .collect();
    if !rest.is_empty() {
        groups.push(EvidenceGroup {
            title: format!(
                "the other findings (observations, the library's notices): {} line(s)",
                rest.len()
            ),
            rows: rest,
        });
    }
    groups
}

/// The zoomed timelines of the first [`MAX_ZOOMS`] episodes of `violations`, and the anchor
/// of the zoom each violation is shown in, if any.
fn zooms(
    view: &RunView,
    violations: &[Finding],
    linked: Links<'_>,
    server: &[ServerLane<'_>],
) -> Result<(Vec<Zoom>, Vec<Option<String>>), ReportError> {
    let episodes = episodes(violations, view.end_ns);
    let mut zooms = Vec::new();
    let mut zoom_of = vec![None; violations.len()];
    for (k, ep) in episodes.iter().take(MAX_ZOOMS).enumerate() {
        let id = format!("zoom-{}", k + 1);
        let numbers: Vec<String> = ep.members.iter().map(|m| format!("{}", m + 1)).collect();
        let mut kinds: Vec<&str> = ep
            .members
            .iter()
            .map(|&m| violations[m].kind.name())
            .collect();
        kinds.dedup();
        zooms.push(Zoom {
            id: id.clone(),
            title: format!(
                "violation{} {}: {} between {} and {}",
                if numbers.len() > 1 { "s" } else { "" },
                numbers.join(", "),
                kinds.join(", "),
                secs(ep.from_ns),
                secs(ep.to_ns)
            ),
            svg: zoom_svg(view, violations, ep, linked, server)?,
        });
        for &m in &ep.members {
            zoom_of[m] = Some(id.clone());
        }
    }
    Ok((zooms, zoom_of))
}

/// The whole run's timeline, of at most [`MAX_LANES`] processes (those in `violations`
/// first), and the note that says so when some are left out.
fn overview_timeline(
    view: &RunView,
    violations: &[Finding],
    linked: Links<'_>,
    server: &[ServerLane<'_>],
) -> Result<(String, String), ReportError> {
    let involved: BTreeSet<u64> = violations
        .iter()
        .flat_map(|f| f.processes.iter().copied())
        .collect();
    let lanes = pick_lanes(view.lanes.iter().collect(), &involved);
    let windows: Vec<TimeWindow> = violations.iter().filter_map(|f| f.window).collect();
    let svg = timeline_svg(
        view,
        &TimelineSpec {
            from_ns: 0,
            to_ns: view.end_ns,
            lanes: lanes.clone(),
            violations: &windows,
            links: linked,
            server,
        },
    )?;
    let note = if lanes.len() < view.lanes.len() {
        format!(
            "{} of {} processes shown: those in violations first, then the busiest.",
            lanes.len(),
            view.lanes.len()
        )
    } else {
        String::new()
    };
    Ok((svg, note))
}

/// The facts of the summary table: the run, its verdict, its counts.
fn run_summary(results: &RunResults, view: &RunView, n_events: usize) -> RunSummary {
    let lock = &results.lock;
    let s = &lock.stats;
    RunSummary {
        scenario: results.scenario.clone(),
        backend: results.backend.clone(),
        library: results.library.clone(),
        server: results.server.as_ref().map(|s| s.describe()),
        instance: results.server.as_ref().and_then(|s| s.instance.clone()),
        discipline: results.discipline.clone(),
        seed: results.seed,
        verdict: results.verdict.name().to_owned(),
        headline: results.verdict.headline().to_owned(),
        not_exposed: (results.verdict == Verdict::NotExposed)
            .then(|| results.not_exposed.clone())
            .flatten(),
        exposures: (results.exposures.as_ref())
            .map_or_else(Vec::new, crate::exposure::exposure_rows),
        expected: results.expected.map(|e| e.name().to_owned()),
        as_expected: results.expected.map(|e| e == results.verdict),
        interrupted: results.interrupted,
        property: lock.property.name().to_owned(),
        duration: format!("{:.1} s", results.workload_ms as f64 / 1000.0),
        ops: results.ops,
        ops_per_sec: format!("{:.0}", results.ops_per_sec()),
        events: n_events,
        processes: view.lanes.len(),
        acquires: format!(
            "{} ok / {} fail / {} info",
            s.acquires_ok, s.acquires_fail, s.acquires_info
        ),
        writes: format!(
            "{} ok / {} rejected / {} fail / {} info",
            s.writes_ok, s.writes_rejected, s.writes_fail, s.writes_info
        ),
        max_holders: s.max_concurrent_holders,
        reproduce: results.reproduce.clone(),
    }
}

/// What the per-lock table says about the locks it does not list.
fn locks_note(per_lock: &[lockpick_checker::lock::LockCounts]) -> String {
    if per_lock.len() <= MAX_LOCK_ROWS {
        return String::new();
    }
    let rest = &per_lock[MAX_LOCK_ROWS..];
    let ops: u64 = rest.iter().map(|c| c.ops).sum();
    let bad = rest.iter().filter(|c| c.violations > 0).count();
    format!(
        "{} of {} locks shown, most violations first, then most operations; the other {} had {ops} operations and {bad} of them had violations.",
        MAX_LOCK_ROWS,
        per_lock.len(),
        rest.len()
    )
}

/// Writes `report.html` into the run folder `dir`, and `history.html` beside it (the rows its
/// timelines link to); returns the report's path.
pub fn write_run_report(
    dir: &Path,
    results: &RunResults,
    events: &[Event],
) -> Result<PathBuf, ReportError> {
    let mut page = HistoryPage::of(results);
    events.iter().for_each(|e| page.push(e));
    let history_upto = page.last_index();
    page.write(dir)?;
    let html = render_events(results, events, history_upto)?;
    let path = dir.join("report.html");
    // Whole or not at all, and never through a link planted at the name.
    lockpick_store::write_atomic(&path, html.as_bytes()).map_err(|source| ReportError::Write {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

/// Re-renders the report of a stored run from its `results.json` and history, in one
/// streaming pass over the history: the view keeps a few words per operation and only the
/// cited events are kept whole, so memory does not follow the history's size.
pub fn report_run_dir(dir: &Path) -> Result<PathBuf, ReportError> {
    write_run_report_streaming(dir, &read_results(dir)?)
}

/// Writes `report.html` of the run folder `dir` for `results`, reading its history in one
/// streaming pass (see [`report_run_dir`]); returns its path.
pub fn write_run_report_streaming(
    dir: &Path,
    results: &RunResults,
) -> Result<PathBuf, ReportError> {
    let history = dir.join(&results.history);
    let parse = |e: lockpick_checker::history::ReadError| ReportError::Parse {
        path: history.clone(),
        message: e.to_string(),
    };
    let cited = cited_indices(results);
    let keep: BTreeSet<u64> = cited.iter().copied().take(MAX_EVIDENCE).collect();
    let soak = SoakRecord::read(dir).map_err(|message| ReportError::Parse {
        path: dir.join(lockpick_store::soak::SOAK_FILE),
        message,
    })?;
    // A soak's page draws the windows around its first violations only (see soak_section).
    let mut drawn = soak.as_ref().map(|_| {
        let windows = episodes(&results.lock.violations, u64::MAX)
            .iter()
            .take(MAX_ZOOMS)
            .map(|ep| (ep.from_ns, ep.to_ns))
            .collect();
        Drawn::new(windows)
    });
    let mut reader = HistoryReader::open(&history).map_err(parse)?;
    let mut builder = ViewBuilder::default();
    let mut page = HistoryPage::of(results);
    let (mut evidence, mut n_events) = (Vec::new(), 0usize);
    while let Some(e) = reader.next_event().map_err(parse)? {
        let e = e.to_owned();
        n_events += 1;
        page.push(&e);
        if keep.contains(&e.index) {
            evidence.push(e.clone());
        }
        if drawn.as_mut().is_none_or(|d| d.keeps(&e)) {
            builder.push(&e);
        }
    }
    let section = soak
        .as_ref()
        .zip(drawn.as_ref())
        .map(|(record, d)| soak_section(record, d.kept, n_events));
    let history_upto = page.last_index();
    page.write(dir)?;
    let html = render_view(
        results,
        &builder.finish(),
        &evidence,
        n_events,
        section,
        history_upto,
    )?;
    let path = dir.join("report.html");
    lockpick_store::write_atomic(&path, html.as_bytes()).map_err(|source| ReportError::Write {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

/// Reads a run folder's `results.json`.
pub fn read_results(dir: &Path) -> Result<RunResults, ReportError> {
    let path = dir.join("results.json");
    let text = std::fs::read_to_string(&path).map_err(|source| ReportError::Read {
        path: path.clone(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| ReportError::Parse {
        path,
        message: e.to_string(),
    })
}

fn finding_row(id: String, f: &Finding, zoom: Option<String>) -> FindingRow {
    FindingRow {
        id,
        kind: f.kind.name().to_owned(),
        class: if f.kind.is_safety() {
            "violation"
        } else {
            "liveness"
        },
        summary: f.summary.clone(),
        indices: f.indices.clone(),
        zoom,
        faults: f.faults.iter().map(|w| w.describe()).collect(),
    }
}

/// Lanes to draw: every one if they fit, else the involved ones and then the busiest, shown in
/// process order.
fn pick_lanes<'a>(mut all: Vec<&'a Lane>, involved: &BTreeSet<u64>) -> Vec<&'a Lane> {
    if all.len() <= MAX_LANES {
        return all;
    }
    all.sort_by_key(|l| (!involved.contains(&l.process), std::cmp::Reverse(l.ops)));
    all.truncate(MAX_LANES);
    all.sort_by_key(|l| l.process);
    all
}

/// The timeline of one episode: the lanes active in it, its violations marked.
fn zoom_svg(
    view: &RunView,
    violations: &[Finding],
    ep: &Episode,
    linked: Links<'_>,
    server: &[ServerLane<'_>],
) -> Result<String, ReportError> {
    let (from, to) = (ep.from_ns, ep.to_ns);
    let active: Vec<&Lane> = view
        .lanes
        .iter()
        .filter(|l| l.first_ns <= to && l.last_ns.max(l.crashed_ns.unwrap_or(0)) >= from)
        .collect();
    let involved: BTreeSet<u64> = ep
        .members
        .iter()
        .flat_map(|&m| violations[m].processes.iter().copied())
        .collect();
    let windows: Vec<TimeWindow> = ep
        .members
        .iter()
        .filter_map(|&m| violations[m].window)
        .collect();
    timeline_svg(
        view,
        &TimelineSpec {
            from_ns: from,
            to_ns: to,
            lanes: pick_lanes(active, &involved),
            violations: &windows,
            links: linked,
            server,
        },
    )
}
