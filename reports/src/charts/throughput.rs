//! Throughput over time: completed operations per second by outcome, with fault bands.

use super::common::{drawn, fault_bands, responsive, secs, CHART_WIDTH, FAIL, INFO, OK};
use crate::error::ReportError;
use crate::view::{Outcome, RunView};
use plotters::prelude::*;

/// How many buckets the run is cut into (at least 50 ms each).
const BUCKETS: u64 = 150;

/// The throughput chart of `view`.
pub fn throughput_svg(view: &RunView) -> Result<String, ReportError> {
    let bucket_ns = (view.end_ns / BUCKETS).max(50_000_000);
    let n = (view.end_ns / bucket_ns + 1) as usize;
    let mut counts = [vec![0u64; n], vec![0u64; n], vec![0u64; n]];
    for o in view.ops.iter().filter(|o| o.completed) {
        let slot = match o.outcome {
            Outcome::Ok => 0,
            Outcome::Fail => 1,
            Outcome::Info => 2,
        };
        counts[slot][(o.end_ns / bucket_ns) as usize] += 1;
    }
    let per_sec = 1e9 / bucket_ns as f64;
    let max = counts.iter().flatten().copied().max().unwrap_or(0).max(1) as f64 * per_sec * 1.1;
    let hi = secs(view.end_ns).max(0.001);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (CHART_WIDTH, 240)).into_drawing_area();
        drawn(root.fill(&WHITE))?;
        let mut chart = drawn(
            ChartBuilder::on(&root)
                .margin(8)
                .caption(
                    format!(
                        "completed operations per second ({} ms buckets)",
                        bucket_ns / 1_000_000
                    ),
                    ("sans-serif", 14).into_font(),
                )
                .x_label_area_size(30)
                .y_label_area_size(70)
                .build_cartesian_2d(0f64..hi, 0f64..max),
        )?;
        drawn(
            chart
                .configure_mesh()
                .x_desc("time (s)")
                .y_desc("ops/s")
                .light_line_style(RGBColor(238, 238, 238))
                .draw(),
        )?;
        fault_bands(&mut chart, &view.faults, 0.0, max, (0.0, hi))?;
        for (slot, color) in [(0, OK), (1, FAIL), (2, INFO)] {
            if counts[slot].iter().all(|&c| c == 0) {
                continue;
            }
            let line = counts[slot].iter().enumerate().map(|(i, &c)| {
                (
                    secs(i as u64 * bucket_ns + bucket_ns / 2),
                    c as f64 * per_sec,
                )
            });
            drawn(chart.draw_series(LineSeries::new(
                line,
                ShapeStyle::from(&color).stroke_width(2),
            )))?;
        }
        drawn(root.present())?;
    }
    Ok(responsive(svg))
}
