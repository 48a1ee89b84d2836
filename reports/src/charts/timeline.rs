//! The timeline: one lane per client process with its lock holds, its writes and their
//! tokens, its retirement or crash, what its lock library told it (a notice); fault windows
//! shaded across all lanes; violation windows marked in red.

use super::common::{
    drawn, fault_bands, secs, CHART_WIDTH, FAIL, GREY, HOLD, HOLD_LOST, INFO, OK, VIOLATION,
};
use crate::error::ReportError;
use crate::view::{Hold, HoldEnd, Lane, Outcome, RunView};
use lockpick_checker::lock::TimeWindow;
use plotters::prelude::*;

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
}

/// Draws the timeline of `spec` over the run `view`. Holds closer together than a pixel are
/// merged into one bar, so the SVG stays bounded by the chart width, not the number of ops.
pub fn timeline_svg(view: &RunView, spec: &TimelineSpec<'_>) -> Result<String, ReportError> {
    let n = spec.lanes.len().max(1);
    let height = 70 + LANE_PX * n as u32;
    let (lo, hi) = (
        secs(spec.from_ns),
        secs(spec.to_ns.max(spec.from_ns + 1_000_000)),
    );
    let px_ns = (spec.to_ns.saturating_sub(spec.from_ns)) as f64 / CHART_WIDTH as f64;
    let mut svg = String::new();
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
        fault_bands(&mut chart, &view.faults, 0.0, n as f64, (lo, hi))?;
        for (i, lane) in spec.lanes.iter().enumerate() {
            draw_lane(&mut chart, lane, row(i), (lo, hi), px_ns)?;
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
    Ok(svg)
}

type Tl<'a, 'b> = super::common::Chart<'a, 'b, plotters::coord::types::RangedCoordf64>;

fn draw_lane(
    chart: &mut Tl<'_, '_>,
    lane: &Lane,
    y: f64,
    (lo, hi): (f64, f64),
    px_ns: f64,
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
                    .into_iter()
                    .map(|(a, b, level)| bar(a, b, HOLD.mix(level))),
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
    } else {
        drawn(chart.draw_series(holds.iter().map(|h| {
            let color = if broken(&h) { HOLD_LOST } else { HOLD };
            bar(h.start_ns, h.end_ns, color.to_rgba())
        })))?;
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
        if let Some(t) = w.token {
            labels.push((x, t));
        }
    }
    if !dense {
        // A token label only where it does not overlap the previous one of its lane.
        let mut free_from = i32::MIN;
        let mut kept = Vec::new();
        for (x, t) in labels {
            let text = format!("{t}");
            let px = chart.backend_coord(&(x, y)).0;
            if px >= free_from {
                free_from = px + 6 * text.len() as i32 + 4;
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
    }
    Ok(())
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
