//! The timeline: one lane per client process with its lock holds (hatched past their lease),
//! its writes and their tokens, its retirement or crash, what its lock library told it (a
//! notice); a client's faults shaded on its lane, the servers' across all lanes; violation
//! windows marked in red; under them, when the run has one, the server's own record of the
//! lock, a lane per node ([`super::server_lanes`]). Every hold, write and fault has an SVG
//! `<title>` and a link to its history line when the page shows it.

use super::common::{
    drawn, fault_bands, responsive, secs, Tl, CHART_WIDTH, FAIL, GREY, HOLD, HOLD_LOST, INFO, OK,
    VIOLATION,
};
use super::overlay::{Links, Overlay, Px};
use super::server_lanes::{draw_server_lane, ServerLane};
use crate::error::ReportError;
use crate::view::{Hold, HoldEnd, Lane, LaneWrite, Outcome, RunView};
use lockpick_checker::faults::{secs as secs_text, FaultWindow};
use lockpick_checker::lock::TimeWindow;
use plotters::prelude::*;

/// At most this many holds, writes and faults get a hover title in one timeline: enough for
/// every one of a zoom, a bound on the overview of a long run.
const MAX_TITLES: usize = 2500;

/// The colour of what a library told its holder.
const NOTICE: RGBColor = RGBColor(123, 31, 162);

/// Above this many writes in a lane, the overview leaves ordinary write markers out (the hold
/// bars already show the rhythm) and keeps only the ones that matter: rejected, stale, unknown.
const MAX_WRITE_MARKERS_PER_LANE: usize = 300;
const LANE_PX: u32 = 22;
/// A lane with more holds than this in view is drawn as an occupancy strip instead of bars.
const MAX_HOLD_BARS_PER_LANE: usize = (CHART_WIDTH / 8) as usize;
/// Width of one occupancy bucket in pixels.
const BUCKET_PX: f64 = 4.0;

/// What part of a run a timeline shows.
pub struct TimelineSpec<'a> {
    pub from_ns: u64,
    pub to_ns: u64,
    /// The lanes to draw, top to bottom.
    pub lanes: Vec<&'a Lane>,
    /// Windows to mark as violations.
    pub violations: &'a [TimeWindow],
    /// Where the marks link their history lines to.
    pub links: Links<'a>,
    /// The server's record of the lock, a lane per node under the processes' (none without
    /// a record).
    pub server: &'a [ServerLane<'a>],
}

/// Draws the timeline of `spec` over the run `view`. Holds closer together than a pixel are
/// merged into one bar, so the SVG stays bounded by the chart width, not the number of ops.
pub fn timeline_svg(view: &RunView, spec: &TimelineSpec<'_>) -> Result<String, ReportError> {
    let n = (spec.lanes.len() + spec.server.len()).max(1);
    let height = 70 + LANE_PX * n as u32;
    let (lo, hi) = (
        secs(spec.from_ns),
        secs(spec.to_ns.max(spec.from_ns + 1_000_000)),
    );
    let px_ns = (spec.to_ns.saturating_sub(spec.from_ns)) as f64 / CHART_WIDTH as f64;
    let mut svg = String::new();
    let mut overlay = Overlay::new(spec.links, MAX_TITLES);
    {
        let root = SVGBackend::with_string(&mut svg, (CHART_WIDTH, height)).into_drawing_area();
        drawn(root.fill(&WHITE))?;
        let mut chart = drawn(
            ChartBuilder::on(&root)
                .margin(8)
                .x_label_area_size(32)
                .y_label_area_size(70)
                .build_cartesian_2d(lo..hi, 0f64..n as f64),
        )?;
        drawn(
            chart
                .configure_mesh()
                .disable_y_mesh()
                .y_labels(0)
                .x_desc("time (s)")
                .x_labels(12)
                .draw(),
        )?;
        // Lane i is drawn at the top: row n-1-i.
        let row = |i: usize| (n - 1 - i) as f64;
        for (i, lane) in spec.lanes.iter().enumerate() {
            let (x, y) = chart.backend_coord(&(lo, row(i) + 0.5));
            // Only a process that retired or crashed is marked: the run's end is no death.
            let label = if lane.retired_ns.is_some() || lane.crashed_ns.is_some() {
                format!("p{} ✝", lane.process)
            } else {
                format!("p{}", lane.process)
            };
            drawn(root.draw(&Text::new(
                label,
                (x - 62, y - 6),
                ("sans-serif", 12).into_font().color(&BLACK),
            )))?;
        }
        // A fault of one client (a pause, a crash) is shaded on its lane; a fault of nodes
        // on those nodes' server lanes when the record draws them, else (or for a fault of
        // nodes the record has no lane for) over every lane. A client whose lane is not drawn
        // is in the faults table.
        let first_server = spec.lanes.len();
        for w in &view.faults {
            let on_nodes: Vec<(f64, f64)> = (spec.server.iter().enumerate())
                .filter(|(_, l)| w.nodes.contains(&l.node))
                .map(|(j, _)| (row(first_server + j), row(first_server + j) + 1.0))
                .collect();
            let rows = match w.client {
                Some(c) => match spec.lanes.iter().position(|l| l.process == c) {
                    Some(i) => vec![(row(i), row(i) + 1.0)],
                    None => continue,
                },
                None if !on_nodes.is_empty() => on_nodes,
                None => vec![(0.0, n as f64)],
            };
            for rows in rows {
                fault_bands(
                    &mut chart,
                    std::slice::from_ref(w),
                    rows.0,
                    rows.1,
                    (lo, hi),
                )?;
                fault_target(&chart, &mut overlay, w, rows, (lo, hi));
            }
        }
        for (i, lane) in spec.lanes.iter().enumerate() {
            draw_lane(&mut chart, lane, row(i), (lo, hi), px_ns, &mut overlay)?;
        }
        for (j, lane) in spec.server.iter().enumerate() {
            let i = first_server + j;
            let (x, y) = chart.backend_coord(&(lo, row(i) + 0.5));
            drawn(root.draw(&Text::new(
                format!("{} (srv)", lane.label),
                (x - 62, y - 6),
                ("sans-serif", 11).into_font().color(&GREY),
            )))?;
            draw_server_lane(
                &mut chart,
                lane,
                row(i),
                (lo, hi),
                view.end_ns,
                &mut overlay,
            )?;
        }
        // Violations on top, translucent, with an outline so a short one still shows.
        let min_w = (hi - lo) / CHART_WIDTH as f64 * 3.0;
        for w in spec.violations {
            let (a, b) = (secs(w.start_ns), secs(w.end_ns));
            if b < lo || a > hi {
                continue;
            }
            let b = b.max(a + min_w);
            drawn(chart.draw_series(std::iter::once(Rectangle::new(
                [(a, 0.0), (b, n as f64)],
                VIOLATION.mix(0.18).filled(),
            ))))?;
            drawn(chart.draw_series(std::iter::once(Rectangle::new(
                [(a, 0.0), (b, n as f64)],
                ShapeStyle::from(&VIOLATION).stroke_width(2),
            ))))?;
        }
        drawn(root.present())?;
    }
    Ok(responsive(overlay.apply(svg)))
}

/// The pixels of `[a, b] × [y0, y1]` in the chart's data coordinates.
fn px_of(chart: &Tl<'_, '_>, (a, b): (f64, f64), (y0, y1): (f64, f64)) -> Px {
    let (x0, top) = chart.backend_coord(&(a, y1));
    let (x1, bottom) = chart.backend_coord(&(b, y0));
    (x0, top, x1, bottom)
}

/// The hover title of a fault band over `rows`, linked to the line that began it.
fn fault_target(
    chart: &Tl<'_, '_>,
    overlay: &mut Overlay<'_>,
    w: &FaultWindow,
    rows: (f64, f64),
    (lo, hi): (f64, f64),
) {
    let (a, b) = (secs(w.start_ns), secs(w.end_ns));
    if b < lo || a > hi {
        return;
    }
    let title = format!("{} (history #{})", w.describe(), w.start_index);
    let px = px_of(chart, (a.max(lo), b.min(hi)), rows);
    overlay.target("fault", px, &title, w.start_index);
}

/// What a hold's title says: who held, when, its token, its lease and how it ended.
fn hold_title(process: u64, h: &Hold) -> String {
    let token = h.token.map(|t| format!(" (token {t})")).unwrap_or_default();
    let lease = match h.lease_end_ns {
        Some(e) if e < h.end_ns => format!(
            "; its lease{} ran out at {}",
            crate::card::counted_from(h),
            secs_text(e)
        ),
        Some(e) => format!("; lease until {}", secs_text(e)),
        None => String::new(),
    };
    let end = match h.end {
        HoldEnd::Released => "released",
        HoldEnd::Lost => "lost",
        HoldEnd::Retired => "its process retired",
        HoldEnd::Crashed => "its process crashed",
        HoldEnd::Open => "still held when the run ended",
    };
    format!(
        "p{process} held the lock {} – {}{token}{lease}; {end} (history #{})",
        secs_text(h.start_ns),
        secs_text(h.end_ns),
        h.index
    )
}

/// What a write's title says: its token, when, how it ended and how long it took.
fn write_title(process: u64, w: &LaneWrite) -> String {
    let token = w
        .token
        .map(|t| format!(" with token {t}"))
        .unwrap_or_default();
    let outcome = match (w.outcome, &w.error) {
        (Outcome::Ok, _) if w.stale => "ok (accepted although stale)".to_owned(),
        (o, Some(e)) => format!("{}: {e}", o.name()),
        (o, None) => o.name().to_owned(),
    };
    format!(
        "p{process} write{token} at {} → {outcome} after {:.2} ms (history #{})",
        secs_text(w.at_ns),
        w.end_ns.saturating_sub(w.at_ns) as f64 / 1e6,
        w.index
    )
}

fn draw_lane(
    chart: &mut Tl<'_, '_>,
    lane: &Lane,
    y: f64,
    (lo, hi): (f64, f64),
    px_ns: f64,
    overlay: &mut Overlay<'_>,
) -> Result<(), ReportError> {
    let in_view = |a: f64, b: f64| b >= lo && a <= hi;
    // The process's life as a thin line; after retirement or crash, a dashed grey remainder.
    let (first, last) = (secs(lane.first_ns), secs(lane.last_ns));
    if in_view(first, last) {
        drawn(chart.draw_series(std::iter::once(PathElement::new(
            vec![(first.max(lo), y + 0.5), (last.min(hi), y + 0.5)],
            GREY.mix(0.6),
        ))))?;
    }
    let from_ns = (lo * 1e9) as u64;
    let to_ns = (hi * 1e9) as u64;
    let holds: Vec<&Hold> = lane
        .holds
        .iter()
        .filter(|h| h.end_ns >= from_ns && h.start_ns <= to_ns)
        .collect();
    let min_w = (hi - lo) / CHART_WIDTH as f64;
    let bar = |a: u64, b: u64, color: RGBAColor| {
        let (a, b) = (secs(a).max(lo), secs(b).min(hi));
        Rectangle::new(
            [(a, y + 0.22), (b.max(a + min_w), y + 0.78)],
            color.filled(),
        )
    };
    let broken = |h: &&&Hold| h.end != HoldEnd::Released && h.end != HoldEnd::Open;
    if holds.len() > MAX_HOLD_BARS_PER_LANE {
        // Too many to tell apart: shade by how much of each few pixels the lock was held,
        // in five levels, merging equal neighbours. Holds that ended badly stay visible.
        let strips = occupancy(&holds, from_ns, to_ns, px_ns * BUCKET_PX);
        drawn(
            chart.draw_series(
                strips
                    .iter()
                    .map(|&(a, b, level)| bar(a, b, HOLD.mix(level))),
            ),
        )?;
        drawn(
            chart.draw_series(
                holds
                    .iter()
                    .filter(broken)
                    .map(|h| bar(h.start_ns, h.end_ns, HOLD_LOST.to_rgba())),
            ),
        )?;
        // Each strip says what it merges, linked to its first hold's line; a hold that ended
        // badly has its own title, as a bar would.
        for (a, b, title, index) in strip_titles(lane.process, &holds, &strips) {
            let (a, b) = (secs(a).max(lo), secs(b).min(hi));
            let px = px_of(chart, (a, b.max(a + min_w)), (y + 0.22, y + 0.78));
            overlay.target("hold", px, &title, index);
        }
        for h in holds.iter().filter(broken) {
            let (a, b) = (secs(h.start_ns).max(lo), secs(h.end_ns).min(hi));
            let px = px_of(chart, (a, b.max(a + min_w)), (y + 0.22, y + 0.78));
            overlay.target("hold", px, &hold_title(lane.process, h), h.index);
        }
    } else {
        drawn(chart.draw_series(holds.iter().map(|h| {
            let color = if broken(&h) { HOLD_LOST } else { HOLD };
            bar(h.start_ns, h.end_ns, color.to_rgba())
        })))?;
        for h in &holds {
            let (a, b) = (secs(h.start_ns).max(lo), secs(h.end_ns).min(hi));
            let px = px_of(chart, (a, b.max(a + min_w)), (y + 0.22, y + 0.78));
            overlay.target("hold", px, &hold_title(lane.process, h), h.index);
        }
    }
    // Past its lease the holder only believed it held the lock: hatched.
    for h in &holds {
        if let Some(end) = h.lease_end_ns.filter(|&e| e < h.end_ns) {
            let (a, b) = (secs(end.max(h.start_ns)).max(lo), secs(h.end_ns).min(hi));
            if b > a {
                overlay.hatch(px_of(chart, (a, b), (y + 0.22, y + 0.78)));
            }
        }
    }

    let visible: Vec<_> = lane
        .writes
        .iter()
        .filter(|w| in_view(secs(w.at_ns), secs(w.at_ns)))
        .collect();
    let dense = visible.len() > MAX_WRITE_MARKERS_PER_LANE;
    let marks = visible
        .iter()
        .filter(|w| !dense || w.rejected || w.stale || w.outcome == Outcome::Info);
    let mut labels = Vec::new();
    for w in marks {
        let x = secs(w.at_ns);
        let (color, size) = if w.stale {
            (VIOLATION, 6)
        } else if w.rejected {
            (FAIL, 5)
        } else {
            match w.outcome {
                Outcome::Ok => (OK, 3),
                Outcome::Fail => (FAIL, 4),
                Outcome::Info => (INFO, 4),
            }
        };
        drawn(chart.draw_series(std::iter::once(TriangleMarker::new(
            (x, y + 0.5),
            size,
            color.filled(),
        ))))?;
        let (cx, cy) = chart.backend_coord(&(x, y + 0.5));
        overlay.target(
            "write",
            (cx - 4, cy - 5, cx + 4, cy + 5),
            &write_title(lane.process, w),
            w.index,
        );
        if let Some(t) = w.token {
            labels.push((x, t));
        }
    }
    if !dense {
        // A token label only where it does not overlap the previous one of its lane.
        // A label that would run past the plot's right edge ends at its mark instead.
        let left = chart.backend_coord(&(lo, y)).0;
        let right = chart.backend_coord(&(hi, y)).0;
        let per_px = (hi - lo) / f64::from((right - left).max(1));
        let mut free_from = i32::MIN;
        let mut kept = Vec::new();
        for (x, t) in labels {
            let text = format!("{t}");
            let width = 6 * text.len() as i32;
            let mut px = chart.backend_coord(&(x, y)).0;
            let mut x = x;
            if px + width > right {
                x -= f64::from(width) * per_px;
                px -= width;
            }
            if px >= free_from {
                free_from = px + width + 4;
                kept.push((x, text));
            }
        }
        let font = ("sans-serif", 10).into_font().color(&BLACK);
        drawn(
            chart.draw_series(
                kept.into_iter()
                    .map(|(x, t)| Text::new(t, (x, y + 0.98), font.clone())),
            ),
        )?;
    }
    // What the library told the holder: a ring above the lane, filled for `lost`.
    for (at, event) in &lane.notices {
        let x = secs(*at);
        if in_view(x, x) {
            let style = if event == "lost" {
                NOTICE.filled()
            } else {
                ShapeStyle::from(&NOTICE).stroke_width(2)
            };
            drawn(chart.draw_series(std::iter::once(Circle::new((x, y + 0.2), 4, style))))?;
        }
    }
    if let Some(at) = lane.retired_ns.or(lane.crashed_ns) {
        let x = secs(at);
        if in_view(x, x) {
            let color = if lane.crashed_ns.is_some() {
                BLACK
            } else {
                INFO
            };
            drawn(chart.draw_series(std::iter::once(Cross::new(
                (x, y + 0.5),
                6,
                ShapeStyle::from(&color).stroke_width(2),
            ))))?;
        }
    } else if let Some(at) = lane.run_ended_ns {
        // The run ended with an operation of it in flight: a neutral grey tick, no cross.
        let x = secs(at);
        if in_view(x, x) {
            drawn(chart.draw_series(std::iter::once(PathElement::new(
                vec![(x, y + 0.15), (x, y + 0.85)],
                ShapeStyle::from(&GREY).stroke_width(2),
            ))))?;
        }
    }
    Ok(())
}

/// The title of each occupancy strip of `process`'s lane (`holds` in time order, as a lane
/// keeps them, not overlapping): how many holds it merges, from when to when, how much of it
/// the lock was held, and its first hold's history index, with the strip's span.
fn strip_titles(
    process: u64,
    holds: &[&Hold],
    strips: &[(u64, u64, f64)],
) -> Vec<(u64, u64, String, u64)> {
    let mut out = Vec::new();
    let mut first = 0;
    for &(a, b, _) in strips {
        while first < holds.len() && holds[first].end_ns < a {
            first += 1;
        }
        let inside: Vec<&Hold> = (holds[first..].iter())
            .take_while(|h| h.start_ns <= b)
            .copied()
            .collect();
        let Some(h0) = inside.first() else {
            continue;
        };
        let held: u64 = (inside.iter())
            .map(|h| h.end_ns.min(b).saturating_sub(h.start_ns.max(a)))
            .sum();
        let share = 100.0 * held as f64 / (b - a).max(1) as f64;
        let title = format!(
            "p{process}: {} hold{} from {} to {}, the lock held {share:.0}% of that time (the first at history #{})",
            inside.len(),
            if inside.len() == 1 { "" } else { "s" },
            secs_text(a),
            secs_text(b),
            h0.index
        );
        out.push((a, b, title, h0.index));
    }
    out
}

/// Runs of buckets of `bucket_ns` over `[from_ns, to_ns]` with the share of time the lock was
/// held, quantised to quarters (a bucket held at all is at least a quarter), equal neighbours
/// merged: `(start_ns, end_ns, opacity)`. Precondition: `holds` are sorted by start.
fn occupancy(holds: &[&Hold], from_ns: u64, to_ns: u64, bucket_ns: f64) -> Vec<(u64, u64, f64)> {
    let bucket = (bucket_ns as u64).max(1);
    let n = ((to_ns - from_ns) / bucket + 1) as usize;
    let mut held = vec![0u64; n];
    for h in holds {
        let (a, b) = (h.start_ns.max(from_ns), h.end_ns.min(to_ns));
        let mut t = a;
        while t < b {
            let i = ((t - from_ns) / bucket) as usize;
            let bucket_end = from_ns + (i as u64 + 1) * bucket;
            let upto = b.min(bucket_end);
            held[i] += upto - t;
            t = upto;
        }
    }
    let mut out: Vec<(u64, u64, f64)> = Vec::new();
    for (i, &h) in held.iter().enumerate() {
        if h == 0 {
            continue;
        }
        let level = ((h as f64 / bucket as f64) * 4.0).ceil().clamp(1.0, 4.0) / 4.0;
        let start = from_ns + i as u64 * bucket;
        let end = (start + bucket).min(to_ns);
        match out.last_mut() {
            Some(last) if last.1 == start && last.2 == level => last.1 = end,
            _ => out.push((start, end, level)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hold(start_ms: u64, end_ms: u64, index: u64) -> Hold {
        Hold {
            start_ns: start_ms * 1_000_000,
            end_ns: end_ms * 1_000_000,
            token: None,
            end: HoldEnd::Released,
            lease_end_ns: None,
            lease_from_ns: None,
            index,
        }
    }

    #[test]
    fn a_strip_s_title_counts_the_holds_it_merges_and_names_the_first() {
        let holds = [hold(0, 10, 3), hold(20, 30, 7), hold(95, 120, 11)];
        let refs: Vec<&Hold> = holds.iter().collect();
        let ms = 1_000_000;
        let strips = [
            (0, 40 * ms, 0.5),
            (90 * ms, 100 * ms, 0.5),
            (100 * ms, 140 * ms, 0.25),
        ];
        let titles = strip_titles(4, &refs, &strips);
        let got: Vec<(&str, u64)> = titles.iter().map(|t| (t.2.as_str(), t.3)).collect();
        assert_eq!(
            got,
            [
                (
                    "p4: 2 holds from 0.000 s to 0.040 s, the lock held 50% of that time (the first at history #3)",
                    3
                ),
                (
                    "p4: 1 hold from 0.090 s to 0.100 s, the lock held 50% of that time (the first at history #11)",
                    11
                ),
                (
                    "p4: 1 hold from 0.100 s to 0.140 s, the lock held 50% of that time (the first at history #11)",
                    11
                ),
            ]
        );
    }
}
